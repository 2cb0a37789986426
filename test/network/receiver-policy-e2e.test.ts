import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyPayloadHmac } from '../../src/delivery/verify.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/test-service.js';

// The receiver policy through the whole service: API, worker, sender, on the real database.
//
// Network safety: the only receiver is a real one on loopback, and every URL here names 127.0.0.1 or localhost. The
// policy under test denies loopback (RECEIVER_DENY=127.0.0.0/8,::1/128), so a guard that failed to refuse would reach
// this receiver and nothing else: the test fails (the receiver counts the request), and nothing leaves the machine.

const DENY_LOOPBACK = { RECEIVER_DENY: '127.0.0.0/8,::1/128' };
const SECRET = 'receiver-policy-secret';
/** How a refusal of `localhost` reads: it may resolve to 127.0.0.1 or ::1 first, both denied. */
const BLOCKED_LOCALHOST = /^blocked by receiver policy: (127\.0\.0\.1 \(127\.0\.0\.0\/8|::1 \(::1\/128) RECEIVER_DENY\)$/;

describe('receiver policy, end to end (issue 11)', () => {
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let t: TestService | undefined;
  beforeAll(async () => {
    testDb = await openTestDatabase();
    receiver = await TestReceiver.start();
  });
  afterEach(async () => {
    await t?.close(); // the database stays open: it is the file's (testDb), shared by the services one after another
    t = undefined;
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.dispose();
  });

  /** The service on this file's database, under the policy `env` gives (none: the default policy). */
  const start = async (env: Record<string, string> = {}): Promise<TestService> => {
    await t?.close();
    t = await startTestService({ testDb, env });
    return t;
  };
  const localhostUrl = () => receiver.url.replace('127.0.0.1', 'localhost');

  it('refuses to create a webhook whose receiver the policy denies, naming the address and the rule', async () => {
    const { admin } = await start(DENY_LOOPBACK);
    const literal = await admin.post('/api/admin/webhooks', { url: receiver.url, secret: SECRET });
    expect(literal.status).toBe(400);
    expect(literal.body).toEqual({ key: 'invalid_parameter', message: 'url points to 127.0.0.1, which the receiver policy denies (127.0.0.0/8 RECEIVER_DENY)', field: 'url' });
    // Another spelling of the same address: URL parsing reads it as 127.0.0.1 before the policy does.
    const hex = await admin.post('/api/admin/webhooks', { url: receiver.url.replace('127.0.0.1', '0x7f000001'), secret: SECRET });
    expect(hex.status).toBe(400);
    expect(hex.body.message).toBe('url points to 127.0.0.1, which the receiver policy denies (127.0.0.0/8 RECEIVER_DENY)');
    // A name whose every address is denied.
    const named = await admin.post('/api/admin/webhooks', { url: localhostUrl(), secret: SECRET });
    expect(named.status).toBe(400);
    expect(named.body.key).toBe('invalid_parameter');
    expect(named.body.message).toMatch(/^url host localhost resolves to (127\.0\.0\.1|::1), which the receiver policy denies \((127\.0\.0\.0\/8|::1\/128) RECEIVER_DENY\)$/);
    expect((await admin.get('/api/admin/webhooks')).body.items).toEqual([]);
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses at connect time a receiver created before the policy denied it: no request, a failed attempt retried later; allowed again, it is delivered', async () => {
    // Created under the default policy, which allows loopback: the creation check lets it through.
    let { admin } = await start();
    await createSource(admin, 'src');
    const alert = await createAlert(admin, 'src');
    const hook = await createWebhook(admin, { url: localhostUrl(), secret: SECRET, events: [{ eventType: 'newCase' }] });
    await reportMatches(admin, 'src', alert.id, [{ nodes: ['n1'] }]);
    const deliveryId: number = (await admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).body.items[0].id;
    const detail = async () => (await t!.admin.get(`/api/admin/webhooks/${hook.id}/deliveries/${deliveryId}`)).body;

    // The same database, served by a process whose policy denies loopback: the check happens where it connects.
    await start(DENY_LOOPBACK);
    await t!.service.engine.worker.drain();
    const blocked = await detail();
    expect(blocked).toMatchObject({ status: 'pending', attempts: 1, sentDate: null });
    expect(blocked.error).toMatch(BLOCKED_LOCALHOST);
    expect(blocked.responseStatus).toBeUndefined();
    expect(blocked.attemptLog).toHaveLength(1);
    expect(blocked.attemptLog[0].error).toBe(blocked.error);
    // Retried like any failure, at the first step of the schedule (1 min ± 20 %): the policy may change meanwhile.
    expect(Date.parse(blocked.nextAttemptAt) - Date.now()).toBeGreaterThan(40_000);
    expect(receiver.received).toHaveLength(0);

    // A ping takes the same path: answered with its one failed attempt, and nothing reached the receiver.
    const ping = await t!.admin.post(`/api/admin/webhooks/${hook.id}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ webhookId: hook.id, status: 'failed', attempts: 1, nextAttemptAt: null });
    expect(ping.body.error).toMatch(BLOCKED_LOCALHOST);
    expect(receiver.received).toHaveLength(0);

    // The default policy again: the delivery, redelivered, reaches the receiver, signed as ever.
    ({ admin } = await start());
    expect((await admin.post(`/api/admin/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`)).status).toBe(200);
    await t!.service.engine.worker.drain();
    const sent = await detail();
    expect(sent).toMatchObject({ status: 'sent', attempts: 1, responseStatus: 204 }); // redelivery starts the count afresh
    expect(sent.attemptLog.map((a: { error?: string }) => a.error)).toEqual([blocked.error, undefined]);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.headers['webhook-id']).toBe(String(deliveryId));
    expect(verifyPayloadHmac(SECRET, got.body, got.headers['x-payload-hmac'])).toBe(true);
  });
});
