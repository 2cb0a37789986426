import { describe, it, expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createSigningKey, signPayload } from '../../src/delivery/signer.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/delivery/verify.js';

const secret = 'whsec-test-secret';
const body = '{"eventType":"ping","data":{"webhookId":7}}';

// Computed independently with OpenSSL 3.0:
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac 'whsec-test-secret' -hex
//   printf '%s' "42.1795000000.$BODY" | openssl dgst -sha256 -hmac 'whsec-test-secret' -binary | base64
const EXPECTED_HMAC_HEX = '40b3b688db07eb88ce954e11c7f36500c036f454e3608e9c160b5458b56ebc00';
const EXPECTED_SIGNATURE = 'v1,pgZJXnDQJ5yEd7IakB+6rdEAJyL1vqBIZX5MorA7tzc=';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

describe('signPayload', () => {
  it('gives the known answers for both signatures', () => {
    expect(signPayload(secret, 42, 1795000000, body)).toEqual({
      'x-payload-hmac': EXPECTED_HMAC_HEX,
      'webhook-id': '42',
      'webhook-timestamp': '1795000000',
      'webhook-signature': EXPECTED_SIGNATURE,
    });
  });

  it('gives the same answers for a Buffer body, a string id and a precomputed key', () => {
    const key = createSigningKey(secret);
    expect(signPayload(key, '42', 1795000000, Buffer.from(body, 'utf8'))).toEqual(signPayload(secret, 42, 1795000000, body));
  });

  it('signs the UTF-8 bytes of the body and of the secret', () => {
    const unicodeSecret = 'clé-secrète-✓';
    const unicodeBody = '{"eventType":"ping","data":{"note":"café ☕"}}';
    const a = signPayload(unicodeSecret, 1, 1795000000, unicodeBody);
    const b = signPayload(createSigningKey(unicodeSecret), 1, 1795000000, Buffer.from(unicodeBody, 'utf8'));
    expect(a).toEqual(b);
    expect(verifyPayloadHmac(unicodeSecret, Buffer.from(unicodeBody, 'utf8'), a['x-payload-hmac'])).toBe(true);
  });

  it('rejects a timestamp that is not whole seconds', () => {
    expect(() => signPayload(secret, 1, 1795000000.5, body)).toThrow(TypeError);
  });

  it('produces a webhook-signature the standardwebhooks library accepts', () => {
    const headers = signPayload(secret, 42, nowSeconds(), body);
    const wh = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    expect(wh.verify(body, headers)).toEqual({ eventType: 'ping', data: { webhookId: 7 } });
    expect(() => wh.verify(body.replace('7', '8'), headers)).toThrow();
    const other = new Webhook(Buffer.from('another-secret', 'utf8').toString('base64'));
    expect(() => other.verify(body, headers)).toThrow();
  });
});

describe('verifyPayloadHmac', () => {
  const header = signPayload(secret, 42, 1795000000, body)['x-payload-hmac'];

  it('accepts the right signature, for a string or a Buffer body', () => {
    expect(verifyPayloadHmac(secret, body, EXPECTED_HMAC_HEX)).toBe(true);
    expect(verifyPayloadHmac(secret, Buffer.from(body), header)).toBe(true);
    expect(verifyPayloadHmac(secret, body, header.toUpperCase())).toBe(true);
  });

  it('rejects a tampered body or a wrong secret', () => {
    expect(verifyPayloadHmac(secret, body.replace('7', '8'), header)).toBe(false);
    expect(verifyPayloadHmac(secret, `${body} `, header)).toBe(false);
    expect(verifyPayloadHmac('wrong-secret', body, header)).toBe(false);
  });

  it('rejects a malformed or wrong-length header without throwing', () => {
    for (const bad of ['', 'zz', header.slice(0, 62), `${header}00`, `${header.slice(0, 63)}g`, `sha256=${header}`, 'v1,abc']) {
      expect(verifyPayloadHmac(secret, body, bad)).toBe(false);
    }
  });

  it('takes a one-element array header, but not a repeated header', () => {
    expect(verifyPayloadHmac(secret, body, [header])).toBe(true);
    expect(verifyPayloadHmac(secret, body, [header, header])).toBe(false);
    expect(verifyPayloadHmac(secret, body, [])).toBe(false);
  });

  it('rejects a missing header', () => {
    expect(verifyPayloadHmac(secret, body, undefined)).toBe(false);
  });
});

describe('verifyStandardWebhook', () => {
  const fixed = signPayload(secret, 42, 1795000000, body);
  const std = {
    'webhook-id': fixed['webhook-id'],
    'webhook-timestamp': fixed['webhook-timestamp'],
    'webhook-signature': fixed['webhook-signature'],
  };

  it('accepts the right signature within the tolerance', () => {
    expect(verifyStandardWebhook(secret, body, std, 300, 1795000000)).toBe(true);
    expect(verifyStandardWebhook(secret, Buffer.from(body), std, 300, 1795000000 + 299.5)).toBe(true);
    expect(verifyStandardWebhook(secret, body, std, 300, 1795000000 - 300)).toBe(true);
  });

  it('uses the current time by default', () => {
    const now = signPayload(secret, 42, nowSeconds(), body);
    expect(verifyStandardWebhook(secret, body, now)).toBe(true);
  });

  it('rejects a timestamp outside the tolerance', () => {
    expect(verifyStandardWebhook(secret, body, std, 300, 1795000000 + 301)).toBe(false);
    expect(verifyStandardWebhook(secret, body, std, 300, 1795000000 - 301)).toBe(false);
    expect(verifyStandardWebhook(secret, body, std, 10, 1795000000 + 11)).toBe(false);
  });

  it('accepts a space-separated list holding one valid v1 entry', () => {
    const list = { ...std, 'webhook-signature': `v2,AAAA v1,${'A'.repeat(43)}= ${std['webhook-signature']} v1a,xyz` };
    expect(verifyStandardWebhook(secret, body, list, 300, 1795000000)).toBe(true);
  });

  it('rejects a tampered body, a wrong secret, another id or timestamp', () => {
    expect(verifyStandardWebhook(secret, body.replace('7', '8'), std, 300, 1795000000)).toBe(false);
    expect(verifyStandardWebhook('wrong-secret', body, std, 300, 1795000000)).toBe(false);
    expect(verifyStandardWebhook(secret, body, { ...std, 'webhook-id': '43' }, 300, 1795000000)).toBe(false);
    expect(verifyStandardWebhook(secret, body, { ...std, 'webhook-timestamp': '1795000001' }, 300, 1795000000)).toBe(false);
  });

  it('rejects malformed or missing headers without throwing', () => {
    const cases = [
      { ...std, 'webhook-signature': undefined },
      { ...std, 'webhook-id': undefined },
      { ...std, 'webhook-timestamp': undefined },
      { ...std, 'webhook-timestamp': 'soon' },
      { ...std, 'webhook-timestamp': '1795000000.0' },
      { ...std, 'webhook-signature': EXPECTED_SIGNATURE.slice(3) },
      { ...std, 'webhook-signature': `v2,${EXPECTED_SIGNATURE.slice(3)}` },
      { ...std, 'webhook-signature': `${EXPECTED_SIGNATURE}=` },
      { ...std, 'webhook-signature': 'v1,' },
      { ...std, 'webhook-signature': [EXPECTED_SIGNATURE, EXPECTED_SIGNATURE] },
      {},
    ];
    for (const headers of cases) {
      expect(verifyStandardWebhook(secret, body, headers, 300, 1795000000)).toBe(false);
    }
  });

  it('checks what the standardwebhooks library signs', () => {
    const wh = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    const ts = nowSeconds();
    const signature = wh.sign('msg_1', new Date(ts * 1000), body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': signature };
    expect(verifyStandardWebhook(secret, body, headers)).toBe(true);
  });
});
