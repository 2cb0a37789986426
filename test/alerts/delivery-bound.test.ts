import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportMatches as report } from '../../src/alerts/matches.js';
import { MAX_DELIVERIES_PER_CALL } from '../../src/limits.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** One matches call creates at most MAX_DELIVERIES_PER_CALL deliveries: refused before any work beyond that. */
describe('the bound on deliveries one matches call may create', () => {
  let t: TestService;
  let alertId: number;
  const counted = 51;
  beforeAll(async () => {
    t = await startTestService();
    await createSource(t.admin, 'A');
    await createSource(t.admin, 'B');
    alertId = (await createAlert(t.admin, 'A')).id;
    // Counted: subscribed to newCase or newMatch on A (or on any source).
    for (let i = 0; i < 26; i++) await createWebhook(t.admin, { events: [{ eventType: 'newCase' }] });
    for (let i = 0; i < counted - 26; i++) await createWebhook(t.admin, { events: [{ eventType: 'newMatch', sourceKey: 'A' }, { eventType: 'newCase', sourceKey: 'A' }] });
    // Not counted: they get nothing from a matches call on A.
    for (let i = 0; i < 5; i++) await createWebhook(t.admin, { events: [{ eventType: 'caseStatusChange' }] });
    for (let i = 0; i < 5; i++) await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'B' }] });
  });
  afterAll(async () => t?.close());

  const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const matches = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ nodes: [`${prefix}-${i}`] }));

  it('refuses 1000 matches × 51 webhooks with 400, naming the numbers and how many matches fit, and changes nothing', async () => {
    expect(1000 * counted).toBeGreaterThan(MAX_DELIVERIES_PER_CALL);
    const response = await t.admin.post(`/api/admin/A/alerts/${alertId}/matches`, { matches: matches(1000, 'big') });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      key: 'invalid_parameter',
      message:
        `matches: this call could create up to ${1000 * counted} deliveries (1000 matches × ${counted} webhooks subscribed to newCase or newMatch ` +
        `on data source "A"), over the limit of ${MAX_DELIVERIES_PER_CALL} deliveries per call: send at most ${Math.floor(MAX_DELIVERIES_PER_CALL / counted)} matches per call`,
      field: 'matches',
    });
    expect(await count('cases')).toBe(0);
    expect(await count('webhook_events')).toBe(0);
    expect(await count('webhook_deliveries')).toBe(0);
  });

  it('lets a call through at the bound and refuses one match more (the bound given as a parameter)', async () => {
    const created = await report(t.db, 'https://lke.example.com', 'A', alertId, matches(2, 'fits'), 2 * counted);
    expect(created).toHaveLength(2);
    // Two new cases: each goes to the webhooks subscribed to newCase on A, fewer than the bound counted.
    expect(await count('webhook_deliveries')).toBe(2 * counted);
    await expect(report(t.db, 'https://lke.example.com', 'A', alertId, matches(3, 'over'), 3 * counted - 1)).rejects.toMatchObject({
      key: 'invalid_parameter',
      message: expect.stringContaining('send at most 2 matches per call'),
    });
    expect(await count('cases')).toBe(2);
  });

  it('does not refuse while webhooks are disabled: such a call creates no delivery', async () => {
    expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false })).status).toBe(204);
    try {
      const before = await count('webhook_deliveries');
      expect(await reportMatches(t.admin, 'A', alertId, matches(1000, 'off'))).toHaveLength(1000);
      expect(await count('webhook_deliveries')).toBe(before);
    } finally {
      expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true })).status).toBe(204);
    }
  });
});
