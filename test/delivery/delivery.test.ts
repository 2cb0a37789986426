import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/index.js';
import type { CronExpression } from '../../src/settings/webhook-settings.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

const SECRET = 'receiver-secret-value';

describe('delivery against a real receiver (docs/api.md, Deliveries)', () => {
  const t = useTestService();
  let receiver: TestReceiver;
  let alertId: number;
  let seq = 0;
  beforeAll(async () => {
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterEach(async () => {
    await receiver?.close();
    await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '* * * * *', retryScheduleMs: [60000], requestTimeoutMs: 10000 } });
    for (const hook of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  /** A webhook at `url` and one newCase event for it: answers the delivery id. */
  async function oneDelivery(url: string): Promise<{ webhookId: number; deliveryId: number }> {
    const hook = await createWebhook(t.admin, { url, secret: SECRET, events: [{ eventType: 'newCase' }] });
    await reportMatches(t.admin, 'src', alertId, [{ nodes: [`node-${++seq}`] }]);
    const list = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).body;
    return { webhookId: hook.id, deliveryId: list.items[0].id };
  }
  const detail = async (webhookId: number, deliveryId: number) => (await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}`)).body;
  const settings = (configuration: Record<string, unknown>) => t.admin.post('/api/config', { path: 'webhooks', configuration });

  it('sends a signed delivery on a seconds-level schedule, and marks it sent', async () => {
    receiver = await TestReceiver.start();
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    // The process's schedule (ROLE=api in tests) is off; arm one as a worker process would.
    const { RecurringTask } = await import('../../src/delivery/schedule.js');
    const schedule = new RecurringTask('test-delivery', async () => t.service.engine.worker.tick(), t.app.log as never);
    schedule.set('* * * * * *' as CronExpression);
    try {
      await receiver.waitFor(1, 5000);
    } finally {
      await schedule.stop();
      await t.service.engine.worker.drain(); // a firing does not wait for its drain: wait here for the outcome
    }
    const got = receiver.received[0]!;
    const delivery = await detail(webhookId, deliveryId);
    expect(got.body).toBe(JSON.stringify(delivery.payload));
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/^alert-webhooks\/\d+\.\d+\.\d+/);
    expect(got.headers['webhook-id']).toBe(String(deliveryId));
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(verifyPayloadHmac(SECRET, got.body, got.headers['x-payload-hmac'])).toBe(true);
    expect(verifyPayloadHmac('another-secret', got.body, got.headers['x-payload-hmac'])).toBe(false);
    expect(verifyStandardWebhook(SECRET, got.body, got.headers)).toBe(true);
    expect(delivery).toMatchObject({ status: 'sent', attempts: 1, nextAttemptAt: null, responseStatus: 204 });
    expect(delivery.error).toBeUndefined();
    expect(Date.parse(delivery.sentDate)).toBeGreaterThan(Date.now() - 10_000);
    expect(delivery.attemptLog).toEqual([
      {
        attemptedAt: expect.stringMatching(/Z$/),
        url: receiver.url,
        durationMs: expect.any(Number),
        timeToFirstByteMs: expect.any(Number),
        responseStatus: 204,
        requestHeaders: expect.objectContaining({ 'webhook-id': String(delivery.id) }),
        responseHeaders: expect.any(Object),
      },
    ]);
  });

  it('records a 500, retries at the next step, then marks it sent on a 204', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = (request, index, response) => (index === 0 ? answer(500, {}, 'database on fire')(request, index, response) : answer(204)(request, index, response));
    await settings({ retryScheduleMs: [0] });
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    const delivery = await detail(webhookId, deliveryId);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(delivery).toMatchObject({ status: 'sent', attempts: 2, responseStatus: 204 });
    expect(delivery.attemptLog).toMatchObject([
      { responseStatus: 500, error: 'receiver answered 500', responseBody: 'database on fire' },
      { responseStatus: 204 },
    ]);
  });

  it('keeps the error and the next attempt after a failure', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(500);
    await settings({ retryScheduleMs: [60000] });
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    const delivery = await detail(webhookId, deliveryId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, error: 'receiver answered 500', responseStatus: 500, sentDate: null });
    const wait = Date.parse(delivery.nextAttemptAt) - Date.now();
    // 60 s ± 20 %.
    expect(wait).toBeGreaterThan(47_000);
    expect(wait).toBeLessThan(73_000);
  });

  it('gives up after the last step: failed', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(503);
    await settings({ retryScheduleMs: [0, 0] });
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    expect(receiver.received).toHaveLength(3);
    expect(await detail(webhookId, deliveryId)).toMatchObject({ status: 'failed', attempts: 3, nextAttemptAt: null, error: 'receiver answered 503' });
  });

  it('honours a longer Retry-After on 503', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(503, { 'retry-after': '120' });
    await settings({ retryScheduleMs: [1000] });
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    const wait = Date.parse((await detail(webhookId, deliveryId)).nextAttemptAt) - Date.now();
    expect(wait).toBeGreaterThan(110_000);
    expect(wait).toBeLessThanOrEqual(120_000);
  });

  it('times out a receiver that never answers', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = () => {};
    await settings({ requestTimeoutMs: 1000, retryScheduleMs: [60000] });
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    expect(await detail(webhookId, deliveryId)).toMatchObject({ status: 'pending', attempts: 1, error: 'timed out after 1000 ms' });
  });

  it('reports a closed port as connection refused', async () => {
    receiver = await TestReceiver.start();
    const url = receiver.url;
    await receiver.close();
    const { webhookId, deliveryId } = await oneDelivery(url);
    await t.service.engine.worker.drain();
    const delivery = await detail(webhookId, deliveryId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, error: 'connection refused' });
    expect(delivery.responseStatus).toBeUndefined();
  });

  it('never follows a redirect', async () => {
    const elsewhere = await TestReceiver.start();
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(302, { location: elsewhere.url });
    try {
      const { webhookId, deliveryId } = await oneDelivery(receiver.url);
      await t.service.engine.worker.drain();
      const delivery = await detail(webhookId, deliveryId);
      expect(delivery.status).toBe('pending');
      expect(delivery.responseStatus).toBe(302);
      expect(delivery.error).toContain('302');
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('pings at once, whatever the schedule, and never retries a ping', async () => {
    receiver = await TestReceiver.start();
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: SECRET });
    const ping = await t.admin.post(`/api/admin/webhooks/${hook.id}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ webhookId: hook.id, status: 'sent', attempts: 1, payload: { eventType: 'ping', data: { webhookId: hook.id } } });
    expect(receiver.received[0]!.body).toBe(`{"eventType":"ping","data":{"webhookId":${hook.id}}}`);
    expect(verifyPayloadHmac(SECRET, receiver.received[0]!.body, receiver.received[0]!.headers['x-payload-hmac'])).toBe(true);

    receiver.behaviour = answer(500);
    const failed = await t.admin.post(`/api/admin/webhooks/${hook.id}/ping`);
    expect(failed.body).toMatchObject({ status: 'failed', attempts: 1, error: 'receiver answered 500', nextAttemptAt: null });
    await t.service.engine.worker.drain();
    expect(receiver.received).toHaveLength(2);
    expect((await t.admin.post('/api/admin/webhooks/99999/ping')).status).toBe(404);
  });

  it('redelivers: pending and due now, the schedule afresh, the attempt log kept', async () => {
    receiver = await TestReceiver.start();
    await settings({ retryScheduleMs: [] });
    receiver.behaviour = answer(500);
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.engine.worker.drain();
    expect(await detail(webhookId, deliveryId)).toMatchObject({ status: 'failed', attempts: 1 });
    receiver.behaviour = answer(200);
    const again = await t.admin.post(`/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'pending', attempts: 0 });
    expect(Date.parse(again.body.nextAttemptAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(again.body.attemptLog).toHaveLength(1);
    await t.service.engine.worker.drain();
    const delivery = await detail(webhookId, deliveryId);
    expect(delivery).toMatchObject({ status: 'sent', attempts: 1, responseStatus: 200 });
    expect(delivery.attemptLog.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 200]);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect((await t.admin.post(`/api/admin/webhooks/${webhookId}/deliveries/99999/redeliver`)).status).toBe(404);
  });

  it('holds one slow receiver to its per-webhook bound while another webhook is served', async () => {
    const slow = await TestReceiver.start();
    receiver = await TestReceiver.start();
    const held: (() => void)[] = [];
    slow.behaviour = (_r, _i, response) => void held.push(() => response.writeHead(204).end());
    try {
      const slowHook = await createWebhook(t.admin, { url: slow.url, secret: SECRET, events: [{ eventType: 'newMatch' }] });
      const fastHook = await createWebhook(t.admin, { url: receiver.url, secret: SECRET, events: [{ eventType: 'newMatch' }] });
      const matches = Array.from({ length: 40 }, (_, i) => ({ nodes: [`bound-${i}`] }));
      await reportMatches(t.admin, 'src', alertId, matches);
      await reportMatches(t.admin, 'src', alertId, matches); // 40 newMatch events for each webhook
      const draining = t.service.engine.worker.drain();
      await receiver.waitFor(40);
      // The fast receiver got everything while the slow one holds at most its bound (16) at once.
      expect(slow.maxInFlight).toBeLessThanOrEqual(16);
      expect(slow.received.length).toBeLessThanOrEqual(16);
      while (slow.received.length < 40) {
        held.splice(0).forEach((release) => release());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      held.splice(0).forEach((release) => release());
      await draining;
      expect(slow.maxInFlight).toBeLessThanOrEqual(16);
      const sent = async (id: number) => (await t.admin.get(`/api/admin/webhooks/${id}/deliveries?status=sent`)).body.totalCount;
      expect(await sent(slowHook.id)).toBe(40);
      expect(await sent(fastHook.id)).toBe(40);
    } finally {
      await slow.close();
    }
  });

  it('sends nothing while webhooks are disabled', async () => {
    receiver = await TestReceiver.start();
    const { webhookId, deliveryId } = await oneDelivery(receiver.url);
    await t.service.settings.update((s) => ({ ...s, enabled: false }));
    try {
      expect(await t.service.engine.worker.drain()).toBe(0);
    } finally {
      await t.service.settings.update((s) => ({ ...s, enabled: true }));
    }
    expect(receiver.received).toHaveLength(0);
    expect((await detail(webhookId, deliveryId)).status).toBe('pending');
  });
});
