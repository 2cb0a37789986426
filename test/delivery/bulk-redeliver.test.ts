import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

/** Bulk recovery after a receiver's outage (issue 12, item 3): real failures, then one call, then real sends. */
describe('bulk redelivery of failed deliveries', () => {
  const t = useTestService();
  let receiver: TestReceiver;
  let alertId: number;
  let seq = 0;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'bulk');
    alertId = (await createAlert(t.admin, 'bulk')).id;
    // One attempt and no retry: a 500 ends a delivery `failed` at once.
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { retryScheduleMs: [] } })).status).toBe(204);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function newCases(count: number): Promise<void> {
    for (let done = 0; done < count; done += 1000) {
      const matches = Array.from({ length: Math.min(1000, count - done) }, () => ({ nodes: [`bulk-${++seq}`] }));
      await reportMatches(t.admin, 'bulk', alertId, matches);
    }
  }
  const countByStatus = async (webhookId: number, status: string) =>
    (await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries?status=${status}&limit=1`)).body.totalCount as number;

  it('makes 10,000 failed deliveries pending and due now, and they go out', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase', sourceKey: 'bulk' }] });
    receiver.behaviour = answer(500);
    await newCases(10_000);
    await t.service.engine.worker.drain();
    expect(await countByStatus(hook.id, 'failed')).toBe(10_000);

    receiver.behaviour = answer(204);
    const before = receiver.received.length;
    const redelivered = await t.admin.post(`/api/admin/webhooks/${hook.id}/deliveries/redeliver`, { status: 'failed' });
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toEqual({ count: 10_000 });
    expect(await countByStatus(hook.id, 'pending')).toBe(10_000);
    // Idempotent: nothing failed is left to take.
    expect((await t.admin.post(`/api/admin/webhooks/${hook.id}/deliveries/redeliver`, { status: 'failed' })).body).toEqual({ count: 0 });

    await t.service.engine.worker.drain();
    expect(await countByStatus(hook.id, 'sent')).toBe(10_000);
    expect(receiver.received.length - before).toBe(10_000);
    await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  }, 120_000); // 20,000 real attempts: about 20 s on this machine

  it('across webhooks: only the ones named, only within since and until', async () => {
    receiver.behaviour = answer(500);
    const named = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase', sourceKey: 'bulk' }] });
    const other = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase', sourceKey: 'bulk' }] });
    await newCases(3);
    await t.service.engine.worker.drain();
    expect(await countByStatus(named.id, 'failed')).toBe(3);
    expect(await countByStatus(other.id, 'failed')).toBe(3);

    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await t.admin.post('/api/admin/deliveries/redeliver', { status: 'failed', webhookIds: [named.id], since: future })).body).toEqual({ count: 0 });
    expect((await t.admin.post('/api/admin/deliveries/redeliver', { status: 'failed', webhookIds: [named.id], until: future })).body).toEqual({ count: 3 });
    expect(await countByStatus(other.id, 'failed')).toBe(3);
    expect((await t.admin.post('/api/admin/deliveries/redeliver', { status: 'failed' })).body).toEqual({ count: 3 });
    expect(await countByStatus(other.id, 'pending')).toBe(3);
  });

  it('refuses a bad body, naming the field, and changes nothing', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url });
    for (const [body, message] of [
      [{}, 'field status is required'],
      [{ status: 'sent' }, 'field status must be "failed"'],
      [{ status: 'failed', since: 'yesterday' }, 'field since must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z, got "yesterday"'],
      [{ status: 'failed', since: '2026-11-23T00:00:00Z', until: '2026-11-22T00:00:00Z' }, 'field since must be before field until'],
    ] as const) {
      const refused = await t.admin.post(`/api/admin/webhooks/${hook.id}/deliveries/redeliver`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toEqual({ key: 'invalid_parameter', message, field: expect.any(String) });
    }
    expect((await t.admin.post('/api/admin/webhooks/999999/deliveries/redeliver', { status: 'failed' })).status).toBe(404);
    expect((await t.admin.post('/api/admin/deliveries/redeliver', { status: 'failed', webhookIds: [] })).status).toBe(400);
  });
});
