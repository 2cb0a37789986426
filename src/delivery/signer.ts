import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/** The signature headers of one delivery attempt (docs/api.md, Delivery requests and their headers). Header names are lower case. */
export type DeliverySignatureHeaders = {
  /** Lowercase hex HMAC-SHA256 of the exact body bytes, keyed by the secret's UTF-8 bytes. */
  'x-payload-hmac': string;
  /** The delivery id, so a receiver can drop a duplicate (delivery is at least once). */
  'webhook-id': string;
  /** Unix seconds (integer) when the attempt was signed. */
  'webhook-timestamp': string;
  /**
   * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` (Standard Webhooks); during a secret
   * rotation's overlap, one such entry per secret, space-separated (`v1,<new> v1,<previous>`).
   */
  'webhook-signature': string;
};

/**
 * A reusable HMAC key for a webhook secret (its UTF-8 bytes), so a worker signing many deliveries
 * for one webhook converts the secret once.
 */
export function createSigningKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/** One secret, or several: the current one first, then the previous one while a rotation's overlap runs. */
export type SigningSecrets = string | KeyObject | readonly (string | KeyObject)[];

/**
 * Signs one delivery body. Pure: the same inputs always give the same headers.
 *
 * With several secrets (a rotation's overlap), `webhook-signature` carries one `v1,` entry per secret, in the order
 * given, space-separated as Standard Webhooks allows, so a receiver still holding the previous secret keeps
 * verifying; `X-Payload-HMAC` has room for one digest and carries the first (current) secret's.
 *
 * `body` is signed as-is: a string is hashed as its UTF-8 bytes, a Buffer byte for byte, so pass
 * exactly what is sent. `timestampSeconds` must be an integer (e.g. `Math.floor(Date.now() / 1000)`);
 * anything else throws a TypeError, since receivers would reject the signature.
 */
export function signPayload(
  secrets: SigningSecrets,
  deliveryId: number | string,
  timestampSeconds: number,
  body: string | Buffer,
): DeliverySignatureHeaders {
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new TypeError('timestampSeconds must be an integer number of Unix seconds');
  }
  // A string key is taken as its UTF-8 bytes by node:crypto, the same bytes createSigningKey uses.
  const keys = Array.isArray(secrets) ? (secrets as readonly (string | KeyObject)[]) : [secrets as string | KeyObject];
  if (keys.length === 0) throw new TypeError('signPayload needs at least one secret');
  const id = String(deliveryId);
  const timestamp = String(timestampSeconds);

  const payloadHmac = createHmac('sha256', keys[0]!).update(body).digest('hex');
  // Standard Webhooks signs "<id>.<timestamp>.<body>"; feed the parts in turn rather than concatenating the body.
  const signatures = keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`);

  return {
    'x-payload-hmac': payloadHmac,
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}
