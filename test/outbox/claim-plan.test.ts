import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_DUE_SQL, claimDueDeliveries, claimParameters, type ClaimRequest } from '../../src/outbox/claims.js';
import { MAX_WEBHOOKS } from '../../src/limits.js';
import { planNodes, visits, type PlanNode } from '../support/query-plan.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

// The claim's cost follows the webhooks with pending deliveries, never the number of webhooks: with MAX_WEBHOOKS
// webhooks of which BUSY have deliveries, the real claim statement's plan (EXPLAIN ANALYZE, so what it did, not
// what it estimated) touches the webhooks table and the due index a number of times bounded by BUSY.
describe('claim plan with many webhooks', () => {
  const BUSY = 10;
  const STEP = MAX_WEBHOOKS / BUSY;
  const busyIds = Array.from({ length: BUSY }, (_, i) => (i + 1) * STEP);
  let t: TestDatabase;

  beforeAll(async () => {
    t = await openTestDatabase();
    // The plain secret column: the webhooks are never signed for here, only walked.
    await t.db.query(`INSERT INTO webhooks (url, secret) SELECT 'http://127.0.0.1:9/hook-' || g, 'claim-plan-secret' FROM generate_series(1, $1::int) g`, [MAX_WEBHOOKS]);
    const { rows } = await t.db.query<{ id: number }>(`INSERT INTO webhook_events (event_type, payload) VALUES ('newCase', '{}') RETURNING id`);
    // Two due deliveries for each busy webhook, and finished ones (history) for every webhook.
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at) SELECT w, $2, now() FROM unnest($1::int[]) w, generate_series(1, 2)`,
      [busyIds, rows[0]!.id],
    );
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, status, finished_at) SELECT g, $2, 'sent', now() FROM generate_series(1, $1::int) g`,
      [MAX_WEBHOOKS, rows[0]!.id],
    );
  });
  afterAll(async () => t?.dispose());

  const explainClaim = async (claim: ClaimRequest): Promise<PlanNode[]> => {
    const { rows } = await t.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_DUE_SQL}`, claimParameters(claim));
    return planNodes(rows[0]!['QUERY PLAN']);
  };

  const expectOnlyBusyVisited = (plan: PlanNode[]) => {
    const onWebhooks = visits(plan, (n) => n['Relation Name'] === 'webhooks');
    expect(onWebhooks.nodes).toBeGreaterThan(0);
    expect(plan.some((n) => n['Relation Name'] === 'webhooks' && n['Node Type'] === 'Seq Scan')).toBe(false);
    expect(onWebhooks.loops).toBeLessThanOrEqual(BUSY);
    expect(onWebhooks.rows).toBeLessThanOrEqual(BUSY);
    // The skip scan (a descent per busy webhook, plus one at the end of each lap) and the due-row probes.
    const onDueIndex = visits(plan, (n) => n['Index Name'] === 'webhook_deliveries_due');
    expect(onDueIndex.nodes).toBeGreaterThan(0);
    expect(onDueIndex.loops).toBeLessThanOrEqual(2 * BUSY + 4);
    expect(onDueIndex.rows).toBeLessThanOrEqual(4 * BUSY + 4);
  };

  it('visits only the busy webhooks, whether something is due or nothing is', async () => {
    const claimRequest = { limit: 100, leaseMs: 60_000, perWebhook: 5, turnAfter: MAX_WEBHOOKS / 2 };
    const claiming = await explainClaim(claimRequest);
    // It did claim: every due delivery, each webhook's two (the UPDATE's rows).
    expect(claiming.find((n) => n['Node Type'] === 'ModifyTable')?.['Actual Rows']).toBe(2 * BUSY);
    expectOnlyBusyVisited(claiming);

    // All leased now: nothing due, and still only the busy webhooks are looked at, with statistics or without.
    expectOnlyBusyVisited(await explainClaim(claimRequest));
    await t.db.query('ANALYZE webhooks');
    await t.db.query('ANALYZE webhook_deliveries');
    const idle = await explainClaim(claimRequest);
    expectOnlyBusyVisited(idle);
    expect(idle.find((n) => n['Node Type'] === 'ModifyTable')?.['Actual Rows']).toBe(0);
    expect(await claimDueDeliveries(t.db, { limit: 100, leaseMs: 60_000 })).toEqual([]);
  });

  // The claim runs as a named (prepared) statement, and PostgreSQL may switch a prepared statement to one generic
  // plan, made without the parameters' values, after its fifth run. That plan must keep to the busy webhooks too.
  it('visits only the busy webhooks with the generic plan of the prepared claim', async () => {
    const claimRequest = { limit: 100, leaseMs: 60_000, perWebhook: 5, turnAfter: MAX_WEBHOOKS / 2 };
    const literal = (value: unknown) => (Array.isArray(value) ? `'{${value.join(',')}}'` : String(value));
    const plans = await t.db.withConnection(async (conn) => {
      await conn.query('SET plan_cache_mode = force_generic_plan');
      await conn.query(`PREPARE claim_plan_generic AS ${CLAIM_DUE_SQL}`);
      try {
        // Everything due again, then claimed; then nothing due.
        await conn.query(`UPDATE webhook_deliveries SET locked_until = NULL WHERE status = 'pending'`);
        await conn.query('ANALYZE webhook_deliveries');
        const explain = async () => {
          const { rows } = await conn.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_plan_generic(${claimParameters(claimRequest).map(literal).join(', ')})`);
          return planNodes(rows[0]!['QUERY PLAN']);
        };
        const claiming = await explain();
        const idle = await explain();
        const { rows } = await conn.query<{ generic: number; custom: number }>(
          `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'claim_plan_generic'`,
        );
        return { claiming, idle, counts: rows[0] };
      } finally {
        await conn.query('DEALLOCATE claim_plan_generic');
        await conn.query('RESET plan_cache_mode');
      }
    });
    expect(plans.counts).toEqual({ generic: 2, custom: 0 });
    expect(plans.claiming.find((n) => n['Node Type'] === 'ModifyTable')?.['Actual Rows']).toBe(2 * BUSY);
    expectOnlyBusyVisited(plans.claiming);
    expect(plans.idle.find((n) => n['Node Type'] === 'ModifyTable')?.['Actual Rows']).toBe(0);
    expectOnlyBusyVisited(plans.idle);
  });
});

// The claim's semantics over a walk that skips idle webhooks: turns that wrap around, exclusions, the per-webhook
// and overall limits, disabled webhooks left out, the webhook's version returned.
describe('claim turns', () => {
  let t: TestDatabase;
  const ids = [3, 10, 20, 30, 40];
  let eventId: number;

  beforeAll(async () => {
    t = await openTestDatabase();
    await t.db.query(`INSERT INTO webhooks (url, secret) SELECT 'http://127.0.0.1:9/hook-' || g, 'claim-turns-secret' FROM generate_series(1, 50) g`);
    eventId = (await t.db.query<{ id: number }>(`INSERT INTO webhook_events (event_type, payload) VALUES ('newCase', '{"n":1}') RETURNING id`)).rows[0]!.id;
  });
  afterAll(async () => t?.dispose());

  const fill = async (perWebhook: number) => {
    await t.db.query('DELETE FROM webhook_deliveries');
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at)
       SELECT w, $2, now() - (n * interval '1 second') FROM unnest($1::int[]) w, generate_series(1, $3::int) n`,
      [ids, eventId, perWebhook],
    );
  };
  const webhooksOf = (claimed: { webhookId: number }[]) => [...new Set(claimed.map((d) => d.webhookId))].sort((a, b) => a - b);

  it('starts after turnAfter and wraps around, up to the limit', async () => {
    await fill(1);
    const claimed = await claimDueDeliveries(t.db, { limit: 3, leaseMs: 60_000, turnAfter: 20 });
    expect(webhooksOf(claimed)).toEqual([3, 30, 40]);
    expect(claimed.every((d) => d.attempts === 1 && d.payload === '{"n":1}' && d.webhookVersion === 1)).toBe(true);
    // The rest, wrapping from the start; then nothing.
    expect(webhooksOf(await claimDueDeliveries(t.db, { limit: 10, leaseMs: 60_000, turnAfter: 3 }))).toEqual([10, 20]);
    expect(await claimDueDeliveries(t.db, { limit: 10, leaseMs: 60_000, turnAfter: 3 })).toEqual([]);
  });

  it('takes up to perWebhook of each webhook, oldest first, and leaves out excluded and disabled webhooks', async () => {
    await fill(3);
    await t.db.query('UPDATE webhooks SET enabled = false, version = version + 1 WHERE id = 30');
    await t.db.query('UPDATE webhooks SET version = 7 WHERE id = 40');
    const claimed = await claimDueDeliveries(t.db, { limit: 100, leaseMs: 60_000, perWebhook: 2, excludedWebhookIds: [10], turnAfter: 0 });
    expect(webhooksOf(claimed)).toEqual([3, 20, 40]);
    for (const id of [3, 20, 40]) expect(claimed.filter((d) => d.webhookId === id)).toHaveLength(2);
    expect(claimed.filter((d) => d.webhookId === 40).every((d) => d.webhookVersion === 7)).toBe(true);
    // Oldest first: the one left of each is the newest.
    const { rows } = await t.db.query<{ webhook_id: number; newest: boolean }>(
      `SELECT webhook_id, next_attempt_at = max(next_attempt_at) OVER (PARTITION BY webhook_id) AS newest
       FROM webhook_deliveries WHERE locked_until IS NULL AND webhook_id IN (3, 20, 40)`,
    );
    expect(rows.map((r) => [r.webhook_id, r.newest]).sort()).toEqual([[20, true], [3, true], [40, true]]);

    // The disabled webhook's deliveries wait; enabled again, they are claimed with its new version.
    await t.db.query('UPDATE webhooks SET enabled = true, version = version + 1 WHERE id = 30');
    const later = await claimDueDeliveries(t.db, { limit: 100, leaseMs: 60_000, perWebhook: 5, excludedWebhookIds: [3, 10, 20, 40] });
    expect(later.map((d) => [d.webhookId, d.webhookVersion])).toEqual([[30, 3], [30, 3], [30, 3]]);
  });
});
