import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOperatorData } from '../../bench/lib/operator-seed.js';
import { searchStatement, type DeliverySearch } from '../../src/outbox/delivery-search.js';
import { READ_COUNTS_SQL, readCountsParameters } from '../../src/outbox/health-over-time.js';
import { planNodes, type PlanNode } from '../support/query-plan.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

/** A plan node as EXPLAIN (ANALYZE) gives it, with the rows its filter dropped (per loop, as `Actual Rows`). */
type Node = PlanNode & { 'Rows Removed by Filter'?: number };

/** The rows a plan read from `table`, kept or dropped by a filter, over every loop. */
const rowsRead = (plan: Node[], table: string) =>
  plan.filter((n) => n['Relation Name'] === table).reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0);

// The search and the health read answer from indexes, and what they read follows the page, not the deliveries kept:
// with a week of 20,000 deliveries (bench/lib/operator-seed.ts: 20 webhooks, 3% failed, 0.1% pings, 40 alerts, a case
// per 5 events), the real statements' plans (EXPLAIN ANALYZE: what they did) scan no table, and read a bounded number
// of deliveries for a page of 20.
describe('search and health plans over a week of deliveries', () => {
  let t: TestDatabase;
  let caseId: number;
  let deliveryId: number;
  // The minutes (since the epoch) the seed ran between: its counts go up to the minute it wrote them in.
  const seeded = { from: 0, to: 0 };
  const minute = () => Math.floor(Date.now() / 60_000);

  beforeAll(async () => {
    t = await openTestDatabase();
    seeded.from = minute();
    await seedOperatorData(t.db, { deliveries: 20_000, webhooks: 20 });
    seeded.to = minute();
    const { rows } = await t.db.query<{ case_id: number; id: number }>(
      `SELECT e.case_id, d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.case_id IS NOT NULL ORDER BY d.id LIMIT 1 OFFSET 5000`,
    );
    ({ case_id: caseId, id: deliveryId } = rows[0]!);
  }, 120_000);
  afterAll(async () => t?.dispose());

  const explain = async (sql: string, values: unknown[]): Promise<Node[]> => {
    const { rows } = await t.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
    return planNodes(rows[0]!['QUERY PLAN']);
  };
  const hours = (n: number) => new Date(Date.now() - n * 3_600_000);

  // [what, the search, an index its plan must use, the most deliveries it may read for a page of 20]
  const cases: [string, Partial<DeliverySearch>, string | undefined, number][] = [
    ['no filter', {}, 'webhook_deliveries_pkey', 21],
    ['a delivery id (webhook-id)', { deliveryId: 0 }, 'webhook_deliveries_pkey', 1],
    ['a case', { caseId: 0 }, 'webhook_events_case', 10],
    // 1 in 1,000 events: read through the pings' own index, not by walking the deliveries.
    ['pings', { eventType: 'ping' }, 'webhook_deliveries_pings', 21],
    // One webhook of 20: about 20 deliveries read per one kept, walking the primary key or the webhook's index.
    ['a webhook', { webhookId: 7 }, undefined, 21 * 20 * 2],
    ['failed deliveries (3%)', { status: 'failed' }, undefined, 1200],
    ['a webhook\'s failed deliveries', { webhookId: 7, status: 'failed' }, undefined, 1200],
    ['an alert (1 in 40)', { alertId: 7 }, undefined, 21 * 40 * 2],
    // A window in the past: its events read newest first, a page of them, wherever it lies.
    ['an hour three days ago', { since: hours(72), until: hours(71) }, 'webhook_events_created', 60],
    ['a day four days ago', { since: hours(96), until: hours(72) }, 'webhook_events_created', 60],
    ['everything before three days ago', { until: hours(72) }, 'webhook_events_created', 60],
    ['pings of the last five days', { eventType: 'ping', since: hours(120) }, undefined, 21 * 2],
    ['an alert\'s day', { alertId: 7, since: hours(96), until: hours(72) }, undefined, 21 * 40 * 2],
  ];

  it.each(cases)('%s: no table scanned, a bounded number of deliveries read', async (_what, filters, index, most) => {
    const search = { limit: 20, ...filters, ...(filters.caseId === 0 ? { caseId } : {}), ...(filters.deliveryId === 0 ? { deliveryId } : {}) };
    const { text, values } = searchStatement(search);
    const plan = await explain(text, values);
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'])).toEqual([]);
    if (index) expect(plan.map((n) => n['Index Name'])).toContain(index);
    const read = rowsRead(plan, 'webhook_deliveries');
    expect(read).toBeLessThanOrEqual(most);
    // It found something: the bound is not met by a search that found nothing.
    expect(plan[0]!['Actual Rows']).toBeGreaterThan(0);
  });

  it('reads the health of a week from one ring of counts by key, never the deliveries', async () => {
    for (const [range, webhookId] of [['week', null], ['hour', 7]] as const) {
      const readFrom = minute();
      const plan = await explain(READ_COUNTS_SQL, readCountsParameters(range, webhookId));
      const readTo = minute();
      expect(plan.some((n) => n['Relation Name'] === 'webhook_deliveries' || n['Relation Name'] === 'webhook_events')).toBe(false);
      // By its key (an index scan, or a bitmap of it), no table scan.
      expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      expect(plan.map((n) => n['Index Name']).filter(Boolean)).toEqual(['delivery_attempt_counts_pkey']);
      // At most a ring (192 hours, 120 minutes), whatever the deliveries.
      expect(rowsRead(plan, 'delivery_attempt_counts')).toBeLessThanOrEqual(range === 'week' ? 192 : 120);
      // The window's rows: 60 minutes (less those begun since the seed wrote its counts, which have none yet); the
      // hours of six whole days and of today so far.
      const rows = plan[0]!['Actual Rows'];
      if (range === 'hour') {
        expect(rows).toBeGreaterThanOrEqual(60 - (readTo - seeded.from));
        expect(rows).toBeLessThanOrEqual(60 - (readFrom - seeded.to));
      }
      else expect(rows > 6 * 24 && rows <= 7 * 24).toBe(true);
    }
  });
});
