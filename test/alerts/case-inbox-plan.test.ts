import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedInbox, type InboxSeed } from '../../bench/lib/inbox-seed.js';
import { decodeCursor, firstPlan, inboxStatement, readInboxPage, WINDOW_PAGES, type InboxPlan, type InboxSearch } from '../../src/alerts/case-inbox.js';
import type { InboxSort, SortDirection } from '../../src/alerts/inbox-schemas.js';
import { planNodes, type PlanNode } from '../support/query-plan.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

type Node = PlanNode & { 'Rows Removed by Filter'?: number };

/** The cases a plan read from `cases` (any of its indexes), kept or dropped by a filter, over every loop. */
const casesRead = (plan: Node[]) =>
  plan.filter((n) => n['Relation Name'] === 'cases').reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0);

// The inbox's plans (src/alerts/case-inbox.ts, `InboxPlan`) over 20,000 cases of 20 alerts (bench/lib/inbox-seed.ts:
// about 1,000 a case's alert, 600 of them unconfirmed): the real statements' plans (EXPLAIN ANALYZE: what they did)
// scan no table and read what their bound says, not the cases kept; and each plan answers what the plain statement
// (one WHERE, one ORDER BY, the planner's plan) answers, page after page.
describe('case inbox plans over 20,000 cases', () => {
  let t: TestDatabase;
  let seed: InboxSeed;
  const base: InboxSearch = { alertIds: 'all', created: {}, updated: {}, columns: [], sort: 'updatedAt', direction: 'desc', limit: 50 };

  beforeAll(async () => {
    t = await openTestDatabase();
    seed = await seedInbox(t.db, { cases: 20_000, alerts: 20, sources: 2, users: 10 });
    await t.db.query('ANALYZE cases');
    await t.db.query('ANALYZE alert_matches');
  }, 120_000);
  afterAll(async () => t?.dispose());

  const explain = async (search: InboxSearch, plan: InboxPlan): Promise<Node[]> => {
    const { text, values } = inboxStatement(search, plan);
    const { rows } = await t.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
    return planNodes(rows[0]!['QUERY PLAN']);
  };
  const ids = async (search: InboxSearch, plan: InboxPlan) => {
    const { text, values } = inboxStatement(search, plan);
    return (await t.db.query<{ id: number }>(text, values)).rows.map((row) => row.id);
  };
  const alertsOf = (source: number) => seed.alertIds[source]!;
  const days = (n: number) => new Date(Date.now() - n * 86_400_000);

  // [what, the search, its first plan, the index that plan walks (any, when the planner may pick), the most cases it may read]
  const scenarios: [string, () => Partial<InboxSearch>, InboxPlan, string | undefined, (s: InboxSearch) => number][] = [
    ['every case (an Analyst)', () => ({}), 'window', 'cases_updated', (s) => (s.limit + 1) * (WINDOW_PAGES + 1)],
    ['open cases', () => ({ statuses: ['unconfirmed', 'in-progress'] }), 'window', 'cases_updated', (s) => (s.limit + 1) * (WINDOW_PAGES + 1)],
    ['by creation, oldest first', () => ({ sort: 'createdAt', direction: 'asc' }), 'window', 'cases_created', (s) => (s.limit + 1) * (WINDOW_PAGES + 1)],
    ['by id', () => ({ sort: 'id' }), 'window', 'cases_pkey', (s) => (s.limit + 1) * (WINDOW_PAGES + 1)],
    ['one alert', () => ({ alertIds: [alertsOf(0)[3]!] }), 'merge', 'cases_alert_status_updated', (s) => (s.limit + 1) * 5],
    ["one alert's confirmed cases", () => ({ alertIds: [alertsOf(0)[3]!], statuses: ['confirmed'] }), 'merge', 'cases_alert_status_updated', (s) => (s.limit + 1) * 2],
    ["a group's 3 alerts, open, by creation", () => ({ alertIds: alertsOf(1).slice(0, 3), statuses: ['unconfirmed', 'in-progress'], sort: 'createdAt' }), 'merge', 'cases_alert_status_created', (s) => (s.limit + 1) * 7],
    ["a group's 3 alerts, by id, oldest first", () => ({ alertIds: alertsOf(1).slice(0, 3), sort: 'id', direction: 'asc' }), 'merge', 'cases_alert_status', (s) => (s.limit + 1) * 13],
    ["one user's cases", () => ({ assignee: seed.userIds[4]! }), 'direct', 'cases_assignee', () => 20_000 / 10 / 10 + 60],
    ['updated in the last week', () => ({ updated: { from: days(7) } }), 'window', 'cases_updated', (s) => (s.limit + 1) * (WINDOW_PAGES + 1)],
    // Created in the last 60 days, sorted by update: read among the cases updated since (updated_at >= created_at, a
    // day's margin), those created up to 42 days before too (updated 0 to 1,000 hours after creation): 1,000 × 103/365.
    ["one alert's cases created in the last 60 days", () => ({ alertIds: [alertsOf(0)[1]!], created: { from: days(60) } }), 'merge', 'cases_alert_status_updated', (s) => 1000 * (103 / 365) * 1.3 + s.limit + 1],
    // The newest match's value, checked on each case of the alert in the statuses asked (about 600 unconfirmed): the
    // planner may read them in order or all at once, either way no more than the alert's.
    ['a column value of one alert', () => ({ alertIds: [alertsOf(1)[0]!], statuses: ['unconfirmed'], columns: [{ name: 'country', type: 'string', value: 'FR' }] }), 'merge', undefined, (s) => 1000 * 0.6 * 1.3 + s.limit + 1],
  ];

  it.each(scenarios)('%s: no table scanned, the bound of its plan read, the answer of the plain statement', async (_what, filters, expected, index, most) => {
    const search = { ...base, ...filters() };
    const plan = firstPlan(search);
    expect(plan).toBe(expected);
    const nodes = await explain(search, plan);
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'])).toEqual([]);
    if (index) expect(nodes.map((n) => n['Index Name'])).toContain(index);
    expect(casesRead(nodes)).toBeLessThanOrEqual(most(search));
    const page = await ids(search, plan);
    // It found a page: the bound is not met by a search that found nothing.
    expect(page.length).toBe(search.limit + 1);
    expect(page).toEqual(await ids(search, 'direct'));
    if (search.alertIds !== 'all') expect(await ids(search, 'merge')).toEqual(page);
  });

  it('hands a window that holds no page to the merge, which answers it', async () => {
    // Created in two days 200 days ago, sorted by update: the 1,020 cases updated last hold none of them.
    const created = { from: days(200), to: days(198) };
    const search: InboxSearch = { ...base, alertIds: alertsOf(0), created };
    expect(firstPlan(search)).toBe('window');
    expect(await ids(search, 'window')).toEqual([]);
    const page = await readInboxPage(t.db, search, 'https://lke.example.com');
    const every = await ids({ ...search, limit: 1000 }, 'direct');
    expect(every.length).toBeGreaterThan(search.limit);
    expect(page.items.map((c) => c.id)).toEqual(every.slice(0, search.limit));
    expect(page.items.every((c) => c.createdAt >= created.from.toISOString() && c.createdAt < created.to.toISOString())).toBe(true);
  });

  const orders: [InboxSort, SortDirection][] = [
    ['updatedAt', 'desc'],
    ['updatedAt', 'asc'],
    ['createdAt', 'desc'],
    ['createdAt', 'asc'],
    ['id', 'desc'],
    ['id', 'asc'],
  ];
  it.each(orders)('pages by %s %s with the cursor: each case once, in the order of the plain statement, on every plan', async (sort, direction) => {
    // Two alerts' confirmed cases (about 200): the merge reads them; the same over every alert of the source, the window.
    for (const alertIds of [alertsOf(1).slice(0, 2), alertsOf(1)]) {
      const search: InboxSearch = { ...base, alertIds, statuses: ['confirmed', 'in-progress'], created: { from: days(200) }, sort, direction, limit: 23 };
      const all = await ids({ ...search, limit: 5000 }, 'direct');
      expect(all.length).toBeGreaterThan(60);
      const seen: number[] = [];
      let cursor: InboxSearch['cursor'];
      for (let pages = 0; pages < 100; pages++) {
        const page = await readInboxPage(t.db, { ...search, cursor }, 'https://lke.example.com');
        seen.push(...page.items.map((c) => c.id));
        if (!page.nextCursor) break;
        cursor = decodeCursor(page.nextCursor, sort, direction);
      }
      expect(seen).toEqual(all);
    }
  });
});
