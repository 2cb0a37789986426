import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/index.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import type { Received } from '../support/receiver.js';
import { TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

const OLD_SECRET = 'the-secret-before-rotation';

/**
 * The `standardwebhooks` library (what receivers use) for one secret. Both our signatures key on the secret's UTF-8
 * bytes; the library takes the key as base64, so it is given the base64 of those bytes.
 */
function libraryFor(secret: string): StandardWebhook {
  return new StandardWebhook(Buffer.from(secret, 'utf8').toString('base64'));
}

/** Whether the library accepts the request with these headers (it throws when no signature matches). */
function libraryAccepts(secret: string, request: Received, signature = String(request.headers['webhook-signature'])): boolean {
  try {
    libraryFor(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': signature,
    });
    return true;
  } catch {
    return false;
  }
}

/** Secret rotation with an overlap (issue 10, item 4), through the API, the worker and a real loopback receiver. */
describe('secret rotation', () => {
  let t: TestService;
  let receiver: TestReceiver;
  let alertId: number;
  let node = 0;

  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });
  // Each test's webhooks go with it, passed or not: the next one counts what its own webhook receives.
  afterEach(async () => {
    for (const { id } of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${id}`);
  });

  /** One new case, sent: answers the request the receiver got. */
  const deliverOne = async (): Promise<Received> => {
    const before = receiver.received.length;
    await reportMatches(t.admin, 'src', alertId, [{ nodes: [`n${++node}`] }]);
    await t.service.engine.worker.drain();
    expect(receiver.received.length).toBe(before + 1);
    return receiver.received.at(-1)!;
  };

  it('generates a secret answered once; during the overlap both signatures verify with standardwebhooks, X-Payload-HMAC with the new one', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: OLD_SECRET, events: [{ eventType: 'newCase' }] });
    const before = await deliverOne();
    expect(String(before.headers['webhook-signature']).split(' ')).toHaveLength(1);

    const rotated = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, {});
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(Object.keys(rotated.body).sort()).toEqual(['previousSecretExpiresAt', 'secret', 'webhookId']);
    const secret: string = rotated.body.secret;
    // 32 random bytes as base64url, with no whsec_ prefix.
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(rotated.body.webhookId).toBe(hook.id);
    // The default overlap: a day.
    const expiresAt = Date.parse(rotated.body.previousSecretExpiresAt);
    expect(expiresAt - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(86_400_000);

    // Never again: not in the read of the webhook, nor in the list.
    const read = await t.admin.get(`/api/admin/webhooks/${hook.id}`);
    expect(read.body.previousSecretExpiresAt).toBe(rotated.body.previousSecretExpiresAt);
    for (const answer of [read.body, (await t.admin.get('/api/admin/webhooks')).body]) {
      expect(JSON.stringify(answer)).not.toContain(secret);
      expect(JSON.stringify(answer)).not.toContain(OLD_SECRET);
    }

    const during = await deliverOne();
    const entries = String(during.headers['webhook-signature']).split(' ');
    expect(entries).toHaveLength(2);
    // The whole header verifies with each secret, and each entry with its own secret: `v1,<new> v1,<old>`.
    expect(libraryAccepts(secret, during)).toBe(true);
    expect(libraryAccepts(OLD_SECRET, during)).toBe(true);
    expect(libraryAccepts(secret, during, entries[0])).toBe(true);
    expect(libraryAccepts(OLD_SECRET, during, entries[1])).toBe(true);
    expect(libraryAccepts(OLD_SECRET, during, entries[0])).toBe(false);
    expect(libraryAccepts('a-secret-nobody-has', during)).toBe(false);
    // X-Payload-HMAC has room for one digest: the new secret's.
    expect(verifyPayloadHmac(secret, during.body, during.headers['x-payload-hmac'])).toBe(true);
    expect(verifyPayloadHmac(OLD_SECRET, during.body, during.headers['x-payload-hmac'])).toBe(false);
    // A receiver moving over gives both secrets to our checks.
    expect(verifyPayloadHmac([OLD_SECRET, secret], during.body, during.headers['x-payload-hmac'])).toBe(true);
    expect(verifyStandardWebhook([secret, OLD_SECRET], during.body, during.headers)).toBe(true);
    expect(verifyStandardWebhook(OLD_SECRET, during.body, during.headers)).toBe(true);
    // Before the rotation only the old secret signed.
    expect(verifyPayloadHmac([secret], before.body, before.headers['x-payload-hmac'])).toBe(false);
    expect(libraryAccepts(secret, before)).toBe(false);
    await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  it('after the overlap only the new secret signs; a given secret is not answered back', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: OLD_SECRET, events: [{ eventType: 'newCase' }] });
    const newSecret = 'a-secret-chosen-by-the-admin';
    const rotated = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, { secret: newSecret, overlapMs: 1500 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ webhookId: hook.id, previousSecretExpiresAt: expect.stringMatching(/Z$/) });

    const during = await deliverOne();
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(libraryAccepts(OLD_SECRET, during)).toBe(true);

    // Past the end of the overlap (a wait for the clock, not a measurement).
    const end = Date.parse(rotated.body.previousSecretExpiresAt);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, end - Date.now()) + 50));
    const after = await deliverOne();
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(libraryAccepts(newSecret, after)).toBe(true);
    expect(libraryAccepts(OLD_SECRET, after)).toBe(false);
    expect(verifyPayloadHmac(newSecret, after.body, after.headers['x-payload-hmac'])).toBe(true);
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}`)).body.previousSecretExpiresAt).toBeNull();
    await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  it('overlapMs 0 drops the previous secret at once, for deliveries and pings alike', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: OLD_SECRET, events: [{ eventType: 'newCase' }] });
    await deliverOne(); // the worker has the endpoint cached with the old secret
    const rotated = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, { overlapMs: 0 });
    expect(rotated.body.previousSecretExpiresAt).toBeNull();
    for (const request of [await deliverOne(), await pingOf(hook.id)]) {
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(libraryAccepts(rotated.body.secret, request)).toBe(true);
      expect(libraryAccepts(OLD_SECRET, request)).toBe(false);
    }
    await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  const pingOf = async (webhookId: number): Promise<Received> => {
    const before = receiver.received.length;
    expect((await t.admin.post(`/api/admin/webhooks/${webhookId}/ping`)).body.status).toBe('sent');
    expect(receiver.received.length).toBe(before + 1);
    return receiver.received.at(-1)!;
  };

  it.each([
    [{ secret: 'short' }, 'field secret must be at least 16 characters long'],
    [{ secret: 'x'.repeat(1025) }, 'field secret must be at most 1024 characters long'],
    // A secret typed by an admin: the rules of a new secret, each named, the secret never repeated back.
    [{ secret: 'abababababababababab' }, 'secret must have at least 6 different characters: this one is easy to guess (generate one with: openssl rand -base64 32)'],
    [{ secret: 'a-pasted-secret-0123\n' }, 'secret must not start or end with a space or a line break (a copy-and-paste slip?)'],
    [{ secret: 'a-typed\tsecret-0123' }, 'secret must not contain control characters such as a tab or a line break'],
    [{ overlapMs: -1 }, 'field overlapMs must be >= 0'],
    [{ overlapMs: 604_800_001 }, 'field overlapMs must be <= 604800000'],
    [{ overlapMs: 1.5 }, 'field overlapMs must be an integer'],
  ])('refuses %j and keeps signing with the secret it had', async (body, message) => {
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: OLD_SECRET, events: [{ eventType: 'newCase' }] });
    try {
      const response = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ key: 'invalid_parameter', message, field: expect.any(String) });
      const typed = (body as { secret?: string }).secret;
      if (typed !== undefined) expect(JSON.stringify(response.body)).not.toContain(typed.trim().slice(0, 12));
      const request = await deliverOne();
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(libraryAccepts(OLD_SECRET, request)).toBe(true);
      expect((await t.admin.get(`/api/admin/webhooks/${hook.id}`)).body.previousSecretExpiresAt).toBeNull();
    } finally {
      await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    }
  });

  it('answers 404 for an unknown webhook', async () => {
    const response = await t.admin.post('/api/admin/webhooks/999999/secret', {});
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ key: 'not_found', message: 'webhook 999999 was not found' });
  });
});
