import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_ATTEMPTS_SQL, recordParameters, type AttemptRecord } from '../../src/outbox/claims.js';
import { MAX_WEBHOOKS } from '../../src/limits.js';
import { planNodes, visits, type PlanNode } from '../support/query-plan.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

/** A parameter as an SQL literal of its type (EXECUTE takes expressions, not bound parameters). */
// recordParameters answers arrays as array literals (text): quoted as SQL text, cast to the array type.
function literal(value: unknown, type: string): string {
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'::${type}[]`;
  if (!Array.isArray(value)) return `${String(value)}::${type}`;
  const items = value.map((v) => (v === null ? 'NULL' : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v)));
  return `ARRAY[${items.join(', ')}]::${type}[]`;
}
const PARAMETER_TYPES = ['bigint', 'int', 'text', 'float8', 'float8', 'int', 'text', 'text', 'float8', 'int'];

// The outcome write runs as a prepared statement: custom plans first, then (PostgreSQL's choice, after five runs) one
// generic plan made without the arrays' values. Either way, with MAX_WEBHOOKS webhooks and history for each, a batch
// of outcomes must reach its deliveries and their webhooks by primary key, a probe each: a hash of the whole table
// (what the planner chose once it could see 384 outcomes or more) made a batch 5 to 10 times slower.
describe('outcome write plan with many webhooks', () => {
  const BUSY = 10;
  const OUTCOMES = 512;
  let t: TestDatabase;
  let records: AttemptRecord[];

  beforeAll(async () => {
    t = await openTestDatabase();
    await t.db.query(`INSERT INTO webhooks (url, secret) SELECT 'http://127.0.0.1:9/hook-' || g, 'record-plan-secret' FROM generate_series(1, $1::int) g`, [MAX_WEBHOOKS]);
    const { rows: events } = await t.db.query<{ id: number }>(`INSERT INTO webhook_events (event_type, payload) VALUES ('newCase', '{}') RETURNING id`);
    const eventId = events[0]!.id;
    // History for every webhook, then OUTCOMES claimed deliveries (lease 1) over BUSY webhooks.
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, status, finished_at) SELECT g, $2, 'sent', now() FROM generate_series(1, $1::int) g`,
      [MAX_WEBHOOKS, eventId],
    );
    const { rows: claimed } = await t.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, attempts, lease_token, locked_until)
       SELECT 1 + (n % $2::int) * ($3::int / $2::int), $1, now(), 1, 1, now() + interval '1 minute' FROM generate_series(1, $4::int) n
       RETURNING id`,
      [eventId, BUSY, MAX_WEBHOOKS, OUTCOMES],
    );
    await t.db.query('ANALYZE webhooks');
    await t.db.query('ANALYZE webhook_deliveries');
    const now = Date.now();
    // Sent, failed for good and to be retried, in turn: every branch of the statement has rows to work on.
    const statuses = ['sent', 'failed', 'pending'] as const;
    records = claimed.map(({ id }, i) => {
      const status = statuses[i % 3]!;
      return {
        id: Number(id),
        leaseToken: 1,
        status,
        nextAttemptAt: status === 'pending' ? now + 60_000 : null,
        attemptedAt: now,
        responseStatus: status === 'sent' ? 204 : 500,
        error: status === 'sent' ? null : "receiver answered 500 (it's down)",
        logEntry: { attemptedAt: new Date(now).toISOString(), url: 'http://127.0.0.1:9/hook', durationMs: 3, responseStatus: status === 'sent' ? 204 : 500 },
      };
    });
  });
  afterAll(async () => t?.dispose());

  /** EXPLAIN ANALYZE of the prepared statement under `mode`, rolled back: what the plan did, with the rows it wrote. */
  const explainRecord = (mode: 'force_custom_plan' | 'force_generic_plan') =>
    t.db.withConnection(async (conn) => {
      await conn.query(`PREPARE record_plan AS ${RECORD_ATTEMPTS_SQL}`);
      await conn.query('BEGIN');
      try {
        await conn.query(`SET LOCAL plan_cache_mode = ${mode}`);
        const args = recordParameters(records, 60_000).map((value, i) => literal(value, PARAMETER_TYPES[i]!));
        const { rows } = await conn.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE record_plan(${args.join(', ')})`);
        const { rows: counts } = await conn.query<{ generic: number; custom: number }>(
          `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'record_plan'`,
        );
        return { plan: planNodes(rows[0]!['QUERY PLAN']), counts: counts[0] };
      } finally {
        await conn.query('ROLLBACK');
        await conn.query('DEALLOCATE record_plan');
      }
    });

  const expectProbesByKey = (plan: PlanNode[]) => {
    // It wrote every outcome (the UPDATE of the deliveries).
    const update = plan.find((n) => n['Node Type'] === 'ModifyTable' && n['Relation Name'] === 'webhook_deliveries');
    expect(update?.['Actual Rows']).toBe(OUTCOMES);
    for (const table of ['webhook_deliveries', 'webhooks']) {
      expect(plan.filter((n) => n['Relation Name'] === table && n['Node Type'] !== 'ModifyTable').map((n) => n['Node Type'])).not.toContain('Seq Scan');
    }
    // The deliveries: one primary-key probe per outcome, each finding its row.
    const deliveryProbes = visits(plan, (n) => n['Index Name'] === 'webhook_deliveries_pkey');
    expect(deliveryProbes.nodes).toBeGreaterThan(0);
    expect(deliveryProbes.loops).toBe(OUTCOMES);
    expect(deliveryProbes.rows).toBe(OUTCOMES);
    // The webhooks: probed by key for the busy ones only (the failure streak, and the check for auto-disable).
    const onWebhooks = (n: PlanNode) => n['Relation Name'] === 'webhooks' && n['Node Type'] !== 'ModifyTable';
    expect(plan.filter(onWebhooks).every((n) => n['Index Name'] === 'webhooks_pkey')).toBe(true);
    const webhookProbes = visits(plan, onWebhooks);
    expect(webhookProbes.nodes).toBeGreaterThan(0);
    expect(webhookProbes.loops).toBeLessThanOrEqual(2 * BUSY);
    // The attempt counts (the health over time): a minute and an hour row per busy webhook and for all, whatever the
    // batch, upserted through their key.
    const counted = plan.find((n) => n['Node Type'] === 'ModifyTable' && n['Relation Name'] === 'delivery_attempt_counts');
    const upserted = counted as (PlanNode & { 'Tuples Inserted': number; 'Conflicting Tuples': number }) | undefined;
    expect((upserted?.['Tuples Inserted'] ?? 0) + (upserted?.['Conflicting Tuples'] ?? 0)).toBe(2 * (BUSY + 1));
    expect(plan.filter((n) => n['Relation Name'] === 'delivery_attempt_counts' && n['Node Type'] !== 'ModifyTable').map((n) => n['Node Type'])).not.toContain('Seq Scan');
  };

  it('probes each delivery and each busy webhook by primary key with a custom plan', async () => {
    const { plan, counts } = await explainRecord('force_custom_plan');
    expect(counts).toEqual({ generic: 0, custom: 1 });
    expectProbesByKey(plan);
  });

  it('probes each delivery and each busy webhook by primary key with the generic plan', async () => {
    const { plan, counts } = await explainRecord('force_generic_plan');
    expect(counts).toEqual({ generic: 1, custom: 0 });
    expectProbesByKey(plan);
  });
});
