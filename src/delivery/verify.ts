import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Receiver-side checks of a delivery's signatures (docs/api.md, Delivery requests and their headers). Give them the raw request body,
 * byte for byte as received (not a re-serialised JSON object), and the secret given to the webhook (or, while it
 * is rotated, both secrets).
 * Neither function throws on bad input: anything malformed, absent or wrong is `false`.
 */

/** A header as Node's `IncomingMessage.headers` gives it. */
type HeaderValue = string | string[] | undefined;

/** The Standard Webhooks headers (lower-case names); a Node `req.headers` object fits as is. */
export interface StandardWebhookHeaders {
  'webhook-id'?: HeaderValue;
  'webhook-timestamp'?: HeaderValue;
  'webhook-signature'?: HeaderValue;
}

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^\d{1,15}$/;

/** One header value, or undefined when absent, empty or repeated (an ambiguous header is not trusted). */
function single(value: HeaderValue): string | undefined {
  if (Array.isArray(value)) {
    return value.length === 1 ? single(value[0]) : undefined;
  }
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * One secret, or a list of the secrets to accept: while a webhook's secret is rotated, a receiver gives both the new
 * one and the one it replaces, and drops the old one once the overlap is over.
 */
export type AcceptedSecrets = string | KeyObject | readonly (string | KeyObject)[];

function secretsOf(accepted: AcceptedSecrets): readonly (string | KeyObject)[] {
  return Array.isArray(accepted) ? (accepted as readonly (string | KeyObject)[]) : [accepted as string | KeyObject];
}

/**
 * Checks `X-Payload-HMAC`: lowercase hex HMAC-SHA256 of the body, keyed by the secret's UTF-8 bytes; with a list of
 * secrets, true when it is the digest of any of them. The comparison takes the same time whatever bytes differ.
 */
export function verifyPayloadHmac(secret: AcceptedSecrets, rawBody: string | Buffer, header: HeaderValue): boolean {
  try {
    const value = single(header)?.trim();
    if (value === undefined || !SHA256_HEX.test(value)) return false;
    const given = Buffer.from(value, 'hex');
    let matched = false;
    for (const key of secretsOf(secret)) {
      const expected = createHmac('sha256', key).update(rawBody).digest();
      // Every secret is checked, so the time taken does not tell which one matched.
      if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}

/**
 * Checks the Standard Webhooks headers: `webhook-signature` holds one or more space-separated
 * `v1,<base64>` entries, one of which must be the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed by
 * the secret (with a list of secrets, by any of them); `webhook-timestamp` (Unix seconds) must be within
 * `toleranceSeconds` of `nowSeconds`.
 */
export function verifyStandardWebhook(
  secret: AcceptedSecrets,
  rawBody: string | Buffer,
  headers: StandardWebhookHeaders | IncomingHttpHeaders,
  toleranceSeconds = 300,
  nowSeconds: number = Date.now() / 1000,
): boolean {
  try {
    const id = single(headers['webhook-id']);
    const timestamp = single(headers['webhook-timestamp'])?.trim();
    const signatures = single(headers['webhook-signature']);
    if (id === undefined || timestamp === undefined || signatures === undefined) return false;
    if (!UNIX_SECONDS.test(timestamp)) return false;
    if (!(Math.abs(nowSeconds - Number(timestamp)) <= toleranceSeconds)) return false;

    const expected = secretsOf(secret).map((key) =>
      Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64'), 'utf8'),
    );
    let matched = false;
    for (const entry of signatures.split(' ')) {
      const comma = entry.indexOf(',');
      if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
      const given = Buffer.from(entry.slice(comma + 1), 'utf8');
      // Check every entry against every secret, so the time taken does not tell which one matched.
      for (const candidate of expected) {
        if (given.length === candidate.length && timingSafeEqual(given, candidate)) matched = true;
      }
    }
    return matched;
  } catch {
    return false;
  }
}
