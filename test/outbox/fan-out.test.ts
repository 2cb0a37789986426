import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { enqueueEvents } from '../../src/outbox/enqueue.js';

type Payload = { eventType: string; sourceKey: string; data: { case: { id: number } } };

describe('events and fan-out (docs/api.md, Events and payloads)', () => {
  let t: TestService;
  const alerts: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestService();
    for (const key of ['A', 'B']) {
      await createSource(t.admin, key);
      alerts[key] = (await createAlert(t.admin, key)).id;
    }
  });
  afterAll(async () => t?.close());

  const deliveriesOf = async (webhookId: number) => {
    const response = await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries?limit=1000`);
    expect(response.status).toBe(200);
    return response.body as { totalCount: number; items: { id: number; status: string; payload: Payload; attempts: number; nextAttemptAt: string | null; sentDate: null }[] };
  };
  const clearDeliveries = () => t.db.query('DELETE FROM webhook_deliveries');
  const clearWebhooks = async () => {
    for (const hook of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  };

  it('subscription matrix: 3 event types × source-scoped and any-source webhooks × 2 sources', async () => {
    await clearWebhooks();
    const types = ['newCase', 'newMatch', 'caseStatusChange'] as const;
    const scoped: Record<string, number> = {};
    const anySource: Record<string, number> = {};
    for (const eventType of types) {
      scoped[eventType] = (await createWebhook(t.admin, { events: [{ eventType, sourceKey: 'A' }] })).id;
      anySource[eventType] = (await createWebhook(t.admin, { events: [{ eventType }] })).id;
    }
    // Entries that overlap still give one delivery per event.
    const overlapping = (await createWebhook(t.admin, { events: [{ eventType: 'newCase' }, { eventType: 'newCase', sourceKey: 'A' }, { eventType: 'newCase', sourceKey: 'B' }] })).id;

    // On each source: one newCase, one newMatch (same target again), one caseStatusChange.
    for (const key of ['A', 'B']) {
      const [kase] = await reportMatches(t.admin, key, alerts[key]!, [{ nodes: [`matrix-${key}`] }]);
      await reportMatches(t.admin, key, alerts[key]!, [{ nodes: [`matrix-${key}`] }]);
      const action = await t.admin.post(`/api/${key}/alerts/${alerts[key]}/cases/${kase!.id}/action`, { action: 'confirm' });
      expect(action.status).toBe(204);
    }

    for (const eventType of types) {
      const scopedGot = (await deliveriesOf(scoped[eventType]!)).items.map((d) => `${d.payload.eventType}@${d.payload.sourceKey}`);
      const anyGot = (await deliveriesOf(anySource[eventType]!)).items.map((d) => `${d.payload.eventType}@${d.payload.sourceKey}`).sort();
      expect(scopedGot, `${eventType} on A only`).toEqual([`${eventType}@A`]);
      expect(anyGot, `${eventType} on any source`).toEqual([`${eventType}@A`, `${eventType}@B`]);
    }
    const overlap = (await deliveriesOf(overlapping)).items.map((d) => `${d.payload.eventType}@${d.payload.sourceKey}`).sort();
    expect(overlap).toEqual(['newCase@A', 'newCase@B']);
    const { rows } = await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_deliveries');
    expect(rows[0]!.count).toBe(3 * 2 + 3 * 1 + 2);
    // Each event's payload is stored once, however many webhooks it goes to.
    const events = await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_events');
    expect(events.rows[0]!.count).toBe(6);
  });

  it('queues each delivery pending, due now, with no attempt yet', async () => {
    const webhook = await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'A' }] });
    await reportMatches(t.admin, 'A', alerts.A!, [{ nodes: ['queued-once'] }]);
    const { items } = await deliveriesOf(webhook.id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ status: 'pending', attempts: 0, sentDate: null });
    expect(Date.parse(items[0]!.nextAttemptAt!)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('freezes the payload when the event happens: later edits of the alert do not change it', async () => {
    await clearWebhooks();
    const hook = await createWebhook(t.admin, { events: [{ eventType: 'newCase' }] });
    await reportMatches(t.admin, 'A', alerts.A!, [{ nodes: ['frozen'] }]);
    const before = (await deliveriesOf(hook.id)).items[0]!.payload;
    const renamed = await t.admin.patch(`/api/admin/A/alerts/${alerts.A}`, { title: 'Renamed', description: 'Changed' });
    expect(renamed.status).toBe(200);
    const after = (await deliveriesOf(hook.id)).items[0]!.payload;
    expect(after).toEqual(before);
    expect(JSON.stringify(after)).toContain('"title":"Shared phone numbers"');
    await reportMatches(t.admin, 'A', alerts.A!, [{ nodes: ['frozen-2'] }]);
    expect(JSON.stringify((await deliveriesOf(hook.id)).items[0]!.payload)).toContain('"title":"Renamed"');
  });

  it('records nothing while the feature is disabled, but still records the domain change', async () => {
    await clearWebhooks();
    await clearDeliveries();
    const hook = await createWebhook(t.admin);
    await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false });
    try {
      const [kase] = await reportMatches(t.admin, 'A', alerts.A!, [{ nodes: ['while-disabled'] }]);
      expect(kase!.created).toBe(true);
    } finally {
      await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true });
    }
    expect((await deliveriesOf(hook.id)).totalCount).toBe(0);
  });

  it('is atomic: a failure after the case is written and before its deliveries leaves neither', async () => {
    await clearWebhooks();
    const hook = await createWebhook(t.admin);
    const casesBefore = (await t.db.query<{ count: number }>('SELECT count(*) AS count FROM cases')).rows[0]!.count;
    const eventsBefore = (await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_events')).rows[0]!.count;
    // Injected failure: the delivery insert (the last write of the transaction, after the cases) raises.
    await t.db.query(`CREATE FUNCTION fail_delivery_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected failure'; END $$`);
    await t.db.query('CREATE TRIGGER fail_delivery_insert BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION fail_delivery_insert()');
    try {
      const response = await t.admin.post(`/api/admin/A/alerts/${alerts.A}/matches`, { matches: [{ nodes: ['atomic-1'] }, { nodes: ['atomic-2'] }] });
      expect(response.status).toBe(500);
      expect(response.body.key).toBe('bug');
      expect(JSON.stringify(response.body)).not.toContain('injected');
    } finally {
      await t.db.query('DROP TRIGGER fail_delivery_insert ON webhook_deliveries');
      await t.db.query('DROP FUNCTION fail_delivery_insert()');
    }
    expect((await t.db.query<{ count: number }>('SELECT count(*) AS count FROM cases')).rows[0]!.count).toBe(casesBefore);
    expect((await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_events')).rows[0]!.count).toBe(eventsBefore);
    expect((await deliveriesOf(hook.id)).totalCount).toBe(0);
    // Without the failure the same call goes through.
    const cases = await reportMatches(t.admin, 'A', alerts.A!, [{ nodes: ['atomic-1'] }, { nodes: ['atomic-2'] }]);
    expect(cases.map((c) => c.created)).toEqual([true, true]);
    expect((await deliveriesOf(hook.id)).totalCount).toBe(2);
  });

  it('lists deliveries newest first, paged, with totalCount and a status filter', async () => {
    await clearWebhooks();
    const hook = await createWebhook(t.admin, { events: [{ eventType: 'newCase' }] });
    const cases = await reportMatches(t.admin, 'B', alerts.B!, Array.from({ length: 5 }, (_, i) => ({ nodes: [`page-${i}`] })));
    const all = await deliveriesOf(hook.id);
    expect(all.totalCount).toBe(5);
    // Newest first: the last match's case comes first.
    expect(all.items.map((d) => d.payload.data.case.id)).toEqual(cases.map((c) => c.id).reverse());
    const page = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries?offset=1&limit=2`)).body;
    expect(page.totalCount).toBe(5);
    expect(page.items.map((d: { id: number }) => d.id)).toEqual(all.items.slice(1, 3).map((d) => d.id));
    await t.db.query(`UPDATE webhook_deliveries SET status = 'sent', sent_date = now(), next_attempt_at = NULL WHERE id = $1`, [all.items[0]!.id]);
    const sent = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries?status=sent`)).body;
    expect(sent.totalCount).toBe(1);
    expect(sent.items[0]).toMatchObject({ id: all.items[0]!.id, status: 'sent', nextAttemptAt: null });
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries?status=pending`)).body.totalCount).toBe(4);
    const detail = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries/${all.items[0]!.id}`)).body;
    expect(detail).toMatchObject({ id: all.items[0]!.id, attemptLog: [] });
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries?status=lost`)).status).toBe(400);
  });

  it('turns one call of 1000 matches with 10 subscribed webhooks into 10,000 deliveries', async () => {
    await clearWebhooks();
    await clearDeliveries();
    for (let i = 0; i < 10; i++) await createWebhook(t.admin);
    const matches = Array.from({ length: 1000 }, (_, i) => ({ nodes: [`bulk-${i}`, `bulk-${i}-b`], edges: [`e-${i}`] }));
    const cases = await reportMatches(t.admin, 'A', alerts.A!, matches);
    expect(cases).toHaveLength(1000);
    expect(cases.every((c) => c.created)).toBe(true);
    const { rows } = await t.db.query<{ count: number; webhooks: number }>('SELECT count(*) AS count, count(DISTINCT webhook_id) AS webhooks FROM webhook_deliveries');
    expect(rows[0]).toEqual({ count: 10_000, webhooks: 10 });
  });

  it('stores each payload as it was given, whether the batch travels joined or as an array literal', async () => {
    await clearWebhooks();
    await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'A' }] });
    // Quotes, backslashes, a non-ASCII character, an escaped control character: JSON as a renderer writes it.
    const json = [JSON.stringify({ a: 'say "hi"\\', b: 'é\u0001' }), JSON.stringify({ c: [1, '{x}', null] })];
    // Not JSON: holds the separator the joined form splits on, so the batch goes as an array literal.
    const odd = ['plain', 'with\u0001separator'];
    for (const payloads of [json, odd]) {
      const ids = await t.db.transaction(async (tx) => {
        const before = await tx.query<{ id: number }>('SELECT coalesce(max(id), 0) AS id FROM webhook_events');
        await enqueueEvents(tx, payloads.map((payload) => ({ eventType: 'newCase' as const, sourceKey: 'A', payload })));
        return before.rows[0]!.id;
      });
      const { rows } = await t.db.query<{ payload: string }>('SELECT payload FROM webhook_events WHERE id > $1 ORDER BY id', [ids]);
      expect(rows.map((r) => r.payload)).toEqual(payloads);
    }
  });
});
