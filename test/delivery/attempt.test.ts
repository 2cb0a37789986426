import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptDelivery, type AttemptContext } from '../../src/delivery/attempt.js';
import { DeliverySender } from '../../src/delivery/sender.js';
import { createSigningKey } from '../../src/delivery/signer.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/delivery/verify.js';
import { createLogger } from '../../src/logger.js';
import type { ClaimedDelivery } from '../../src/outbox/claims.js';
import { answer, TestReceiver } from '../support/receiver.js';

// One attempt on its own: a claimed delivery, a real loopback receiver, no database.
describe('one attempt → its record', () => {
  const secret = 'attempt-test-secret-1';
  const lines: string[] = [];
  let receiver: TestReceiver;
  let sender: DeliverySender;
  let context: AttemptContext;
  beforeAll(async () => {
    receiver = await TestReceiver.start();
    sender = new DeliverySender();
    context = {
      sender,
      settings: { requestTimeoutMs: 5_000, retryScheduleMs: [60_000, 300_000] },
      log: createLogger('debug', { write: (line: string) => void lines.push(line) }),
    };
  });
  afterAll(async () => {
    await sender.close();
    await receiver?.close();
  });

  const endpoint = () => ({ url: receiver.url, key: createSigningKey(secret), version: 1 });
  const delivery = (over: Partial<ClaimedDelivery> = {}): ClaimedDelivery => ({
    id: 41,
    webhookId: 7,
    attempts: 1,
    leaseToken: 3,
    isPing: false,
    payload: '{"eventType":"newCase","data":{"title":"café ✓"}}',
    webhookVersion: 1,
    ...over,
  });

  it('signs and sends the payload bytes, and a 2xx makes the record sent, for this claim, with its log entry', async () => {
    receiver.behaviour = answer(204);
    const before = Date.now();
    const record = await attemptDelivery(delivery(), endpoint(), context);

    const request = receiver.received.at(-1)!;
    expect(request.body).toBe(delivery().payload);
    expect(request.headers['webhook-id']).toBe('41');
    expect(verifyPayloadHmac(secret, Buffer.from(request.body, 'utf8'), request.headers['x-payload-hmac'])).toBe(true);
    expect(verifyStandardWebhook(secret, Buffer.from(request.body, 'utf8'), request.headers)).toBe(true);

    expect(record).toMatchObject({ id: 41, leaseToken: 3, status: 'sent', nextAttemptAt: null, responseStatus: 204, error: null });
    expect(record.attemptedAt).toBeGreaterThanOrEqual(before);
    expect(record.logEntry).toEqual({
      attemptedAt: new Date(record.attemptedAt).toISOString(),
      url: receiver.url,
      durationMs: expect.any(Number),
      timeToFirstByteMs: expect.any(Number),
      responseStatus: 204,
      // What was sent, as the receiver got it: the signatures, never the secret.
      requestHeaders: {
        'content-type': 'application/json',
        'user-agent': request.headers['user-agent'],
        'x-payload-hmac': request.headers['x-payload-hmac'],
        'webhook-id': '41',
        'webhook-timestamp': request.headers['webhook-timestamp'],
        'webhook-signature': request.headers['webhook-signature'],
      },
      responseHeaders: expect.objectContaining({ connection: 'keep-alive' }),
    });
    expect(JSON.stringify(record)).not.toContain(secret);
    // The debug line names the delivery and its outcome, never the secret.
    const line = lines.find((l) => l.includes('"deliveryId":41'));
    expect(JSON.parse(line!)).toMatchObject({ msg: 'delivery attempt', webhookId: 7, attempt: 1, outcome: 'sent', responseStatus: 204 });
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('a failed attempt is retried after its step of the schedule (±20%), its answer kept in the log entry', async () => {
    receiver.behaviour = answer(500, { 'content-type': 'text/plain' }, 'receiver broke');
    const record = await attemptDelivery(delivery({ attempts: 2 }), endpoint(), context);
    expect(record.status).toBe('pending');
    expect(record.responseStatus).toBe(500);
    expect(record.error).toEqual(expect.any(String));
    expect(record.nextAttemptAt! - record.attemptedAt).toBeGreaterThanOrEqual(300_000 * 0.8);
    expect(record.nextAttemptAt! - record.attemptedAt).toBeLessThanOrEqual(300_000 * 1.2 + record.logEntry.durationMs + 1_000);
    expect(record.logEntry).toMatchObject({ responseStatus: 500, responseBody: 'receiver broke', error: record.error });
  });

  it('a longer Retry-After on 503 wins over the schedule', async () => {
    receiver.behaviour = answer(503, { 'retry-after': '3600' });
    const record = await attemptDelivery(delivery(), endpoint(), context);
    expect(record.status).toBe('pending');
    expect(record.nextAttemptAt! - record.attemptedAt).toBeGreaterThanOrEqual(3_600_000);
  });

  it('fails for good past the last step, and a ping is never retried', async () => {
    receiver.behaviour = answer(500);
    expect(await attemptDelivery(delivery({ attempts: 3 }), endpoint(), context)).toMatchObject({ status: 'failed', nextAttemptAt: null, responseStatus: 500 });
    expect(await attemptDelivery(delivery({ isPing: true }), endpoint(), context)).toMatchObject({ status: 'failed', nextAttemptAt: null });
  });

  it('a receiver that cannot be reached is an outcome, not a throw', async () => {
    const closed = await TestReceiver.start();
    const url = closed.url;
    await closed.close();
    const record = await attemptDelivery(delivery(), { url, key: createSigningKey(secret), version: 1 }, context);
    expect(record).toMatchObject({ status: 'pending', responseStatus: null });
    expect(record.error).toEqual(expect.any(String));
    expect(record.logEntry.responseStatus).toBeUndefined();
  });
});
