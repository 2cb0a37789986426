import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/index.js';
import { examplePayload } from '../../src/outbox/event-examples.js';
import { EVENT_TYPES } from '../../src/outbox/schemas.js';
import { REPO_ROOT } from '../support/processes.js';
import { createWebhook } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

const SECRET = 'receiver-exchange-secret-0123';

/**
 * What an admin sees of an exchange with a receiver, through the API (issue 29, items 3 and 4): each attempt's
 * request headers, answer headers, first 4 KiB of the answer and time to first byte, recorded in the database and
 * read back; a real loopback receiver.
 */
describe('the whole exchange of an attempt', () => {
  let t: TestService;
  let receiver: TestReceiver;
  let webhookId: number;

  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
    webhookId = (await createWebhook(t.admin, { url: receiver.url, secret: SECRET })).id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('keeps the headers sent (signatures that verify, never the secret), the answer headers, body and time to first byte', async () => {
    receiver.behaviour = answer(200, { 'content-type': 'text/plain', 'x-receiver': 'r1', 'set-cookie': 'sid=receiver-session' }, 'stored, thanks');
    const ping = await t.admin.post(`/api/admin/webhooks/${webhookId}/ping`);
    expect(ping.status, JSON.stringify(ping.body)).toBe(200);
    const read = await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries/${ping.body.id}`);
    const [entry] = read.body.attemptLog;
    const got = receiver.received.at(-1)!;

    expect(entry).toMatchObject({
      responseStatus: 200,
      responseBody: 'stored, thanks',
      responseHeaders: { 'content-type': 'text/plain', 'x-receiver': 'r1', 'set-cookie': '(not recorded)' },
      timeToFirstByteMs: expect.any(Number),
    });
    expect(entry.timeToFirstByteMs).toBeLessThanOrEqual(entry.durationMs);
    for (const name of ['content-type', 'user-agent', 'x-payload-hmac', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(entry.requestHeaders[name], name).toBe(got.headers[name]);
    }
    expect(entry.requestHeaders['webhook-id']).toBe(String(ping.body.id));
    // The recorded request is enough to check it: the payload's compact JSON with the recorded headers verifies.
    const body = Buffer.from(JSON.stringify(read.body.payload), 'utf8');
    expect(verifyStandardWebhook(SECRET, body, entry.requestHeaders, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(verifyPayloadHmac(SECRET, body, entry.requestHeaders['x-payload-hmac'])).toBe(true);
    const text = JSON.stringify(read.body);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('receiver-session');
  });

  it('an answer with U+0000 in its body or a flood of headers is recorded, bounded, and the outcome written', async () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-flood-${i}`, 'y'.repeat(100)]));
    receiver.behaviour = answer(500, many, `bad\u0000byte ${'z'.repeat(6_000)}`);
    const ping = await t.admin.post(`/api/admin/webhooks/${webhookId}/ping`);
    expect(ping.status, JSON.stringify(ping.body)).toBe(200);
    expect(ping.body).toMatchObject({ status: 'failed', responseStatus: 500 });
    const [entry] = (await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries/${ping.body.id}`)).body.attemptLog;
    expect(entry.responseBody.startsWith('bad\uFFFDbyte zzz')).toBe(true);
    // The first 4 KiB as received; each U+0000 (1 byte) became U+FFFD (3 bytes in UTF-8).
    expect(Buffer.byteLength(entry.responseBody)).toBe(4096 + 2);
    expect(entry.responseBodyTruncated).toBe(true);
    expect(entry.responseHeadersTruncated).toBe(true);
    const headerChars = Object.entries(entry.responseHeaders as Record<string, string>).reduce((n, [k, v]) => n + k.length + v.length, 0);
    expect(headerChars).toBeLessThanOrEqual(4096);
  });

  it('sends the documented example of each event type, signed, recorded as a test and never retried', async () => {
    // Subscribed to none of them, and disabled: an example goes all the same, as a ping does.
    const hook = (await createWebhook(t.admin, { url: receiver.url, secret: SECRET, events: [{ eventType: 'webhookDisabled' }] })).id;
    expect((await t.admin.patch(`/api/admin/webhooks/${hook}`, { enabled: false })).status).toBe(200);
    receiver.behaviour = answer(204);
    for (const eventType of EVENT_TYPES) {
      const sent = await t.admin.post(`/api/admin/webhooks/${hook}/example`, { eventType });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toMatchObject({ status: 'sent', test: true, attempts: 1, payload: { eventType } });
      const got = receiver.received.at(-1)!;
      expect(got.body).toBe(examplePayload(eventType));
      expect(verifyStandardWebhook(SECRET, Buffer.from(got.body), got.headers)).toBe(true);
      expect(got.headers['webhook-id']).toBe(String(sent.body.id));
    }
    receiver.behaviour = answer(503, { 'retry-after': '1' });
    const failed = await t.admin.post(`/api/admin/webhooks/${hook}/example`, { eventType: 'newCase' });
    expect(failed.body).toMatchObject({ status: 'failed', nextAttemptAt: null, responseStatus: 503, test: true });
    // Tests are no failure streak, and the list marks them too; real deliveries carry no mark.
    const read = await t.admin.get(`/api/admin/webhooks/${hook}`);
    expect(read.body.failingSince).toBeNull();
    const listed = (await t.admin.get(`/api/admin/webhooks/${hook}/deliveries`)).body;
    expect(listed.items.every((d: { test?: boolean }) => d.test === true)).toBe(true);
  });

  it('refuses an example of an unknown event type, naming the field', async () => {
    const refused = await t.admin.post(`/api/admin/webhooks/${webhookId}/example`, { eventType: 'newThing' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ key: 'invalid_parameter', field: 'eventType' });
    expect((await t.admin.post('/api/admin/webhooks/999999/example', { eventType: 'newCase' })).status).toBe(404);
  });

  it('the examples in docs/api.md are the ones sent', () => {
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Events and payloads'));
    const block = /```json\n([\s\S]*?)```/.exec(section)![1]!;
    // Compact again, key order included: the exact bytes sent.
    const documented = block.split(/\n\s*\n/).map((text) => JSON.stringify(JSON.parse(text)));
    expect(documented).toEqual((['newCase', 'newMatch', 'caseStatusChange', 'ping', 'webhookDisabled'] as const).map((type) => examplePayload(type)));
  });
});
