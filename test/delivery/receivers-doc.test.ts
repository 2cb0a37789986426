import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../../src/delivery/signer.js';
import { verifyPayloadHmac } from '../../src/verify.js';

// What docs/receivers.md tells a receiver to do, against what the service signs: the three ways of giving a
// Standard Webhooks library the secret, and the X-Payload-HMAC rotation with both secrets accepted.

const body = '{"eventType":"ping","data":{"webhookId":7}}';
const now = () => Math.floor(Date.now() / 1000);

describe('the receivers guide', () => {
  // Beyond ASCII on purpose: the key is the secret's UTF-8 bytes.
  const secret = 'receiver-secret-é-0123456789';

  it('verifies with standardwebhooks given the base64 of the secret, its whsec_ form, or its UTF-8 bytes as raw', () => {
    const headers = signPayload(secret, 42, now(), body) as unknown as Record<string, string>;
    const base64 = Buffer.from(secret, 'utf8').toString('base64');
    for (const webhook of [new Webhook(base64), new Webhook(`whsec_${base64}`), new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })]) {
      expect(webhook.verify(body, headers)).toEqual({ eventType: 'ping', data: { webhookId: 7 } });
    }
    // The caveat the guide gives: the raw option given the string reads one byte per character, not UTF-8.
    expect(() => new Webhook(secret, { format: 'raw' }).verify(body, headers)).toThrow();
  });

  it('lets an X-Payload-HMAC receiver that accepts both secrets through a rotation without a rejected delivery', () => {
    const newSecret = 'the-new-secret-0123456789';
    const before = signPayload(secret, 1, now(), body)['x-payload-hmac'];
    // After the rotation, X-Payload-HMAC is the new secret's alone, even with the old one still signing.
    const after = signPayload([newSecret, secret], 2, now(), body)['x-payload-hmac'];
    expect(verifyPayloadHmac(secret, body, after)).toBe(false);
    for (const header of [before, after]) expect(verifyPayloadHmac([newSecret, secret], body, header)).toBe(true);
  });
});
