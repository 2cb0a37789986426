import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/** The signature headers of one delivery attempt (CONTRACT §5). Header names are lower case. */
export type DeliverySignatureHeaders = {
  /** Lowercase hex HMAC-SHA256 of the exact body bytes, keyed by the secret's UTF-8 bytes. */
  'x-payload-hmac': string;
  /** The delivery id, so a receiver can drop a duplicate (delivery is at least once). */
  'webhook-id': string;
  /** Unix seconds (integer) when the attempt was signed. */
  'webhook-timestamp': string;
  /** `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` (Standard Webhooks). */
  'webhook-signature': string;
};

/**
 * A reusable HMAC key for a webhook secret (its UTF-8 bytes), so a worker signing many deliveries
 * for one webhook converts the secret once.
 */
export function createSigningKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/**
 * Signs one delivery body. Pure: the same inputs always give the same headers.
 *
 * `body` is signed as-is: a string is hashed as its UTF-8 bytes, a Buffer byte for byte, so pass
 * exactly what is sent. `timestampSeconds` must be an integer (e.g. `Math.floor(Date.now() / 1000)`);
 * anything else throws a TypeError, since receivers would reject the signature.
 */
export function signPayload(
  secret: string | KeyObject,
  deliveryId: number | string,
  timestampSeconds: number,
  body: string | Buffer,
): DeliverySignatureHeaders {
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new TypeError('timestampSeconds must be an integer number of Unix seconds');
  }
  // A string key is taken as its UTF-8 bytes by node:crypto, the same bytes createSigningKey uses.
  const key = secret;
  const id = String(deliveryId);
  const timestamp = String(timestampSeconds);

  const payloadHmac = createHmac('sha256', key).update(body).digest('hex');
  // Standard Webhooks signs "<id>.<timestamp>.<body>"; feed the parts in turn rather than concatenating the body.
  const standard = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');

  return {
    'x-payload-hmac': payloadHmac,
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standard}`,
  };
}
