import type { KeyObject } from 'node:crypto';
import { Pool } from 'undici';
import { createSigningKey, signPayload } from '../../src/delivery/signer.js';
import { renderNewCase } from '../../src/outbox/events.js';
import { median } from './progress.js';

/** Measured rounds after the warm-up; the ceiling is their median (an odd count, so one round is the middle). */
export const CEILING_ROUNDS = 3;

const ALERT = { id: 1, title: 'Shared phone numbers', description: 'Two clients share a phone' };

/** The newCase body of case `i`, as the service renders one for the bench alert (the ceiling and the peers send it). */
export function caseBody(i: number, createdAt = new Date()): string {
  return renderNewCase('bench', ALERT, { id: i, createdAt, nodes: [`n${i}`, `m${i}`], edges: [`e${i}`], url: `http://localhost:3000/alerts/1/case/${i}` });
}

/** The request headers of one delivery attempt, as the service sends them: the two HMACs (X-Payload-HMAC, Standard Webhooks). */
export function deliveryHeaders(key: KeyObject, deliveryId: number | string, body: string | Buffer): Record<string, string> {
  return { 'content-type': 'application/json', 'user-agent': 'alert-webhooks-bench', ...signPayload(key, deliveryId, Math.floor(Date.now() / 1000), body) };
}

/** The signing key of bench webhook `i`: the secret the harness gives it. */
export function webhookKey(i: number): KeyObject {
  return createSigningKey(`bench-webhook-secret-${i}`);
}

/**
 * The physical ceiling: a plain undici Pool (no database) POSTing the same kind of bodies, with the same HMAC
 * headers, to the same receiver, 64 at a time, `count` requests per round. Every other figure is given as a ratio to it.
 */
export async function measureCeiling(receiverUrl: string, count: number, concurrency = 64): Promise<{ deliveriesPerSecond: number; count: number; rounds: number[] }> {
  const url = new URL(receiverUrl);
  const pool = new Pool(url.origin, { connections: concurrency });
  const key = webhookKey(0);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const body = caseBody(i);
      const response = await pool.request({ method: 'POST', path: url.pathname, headers: deliveryHeaders(key, i, body), body });
      await response.body.dump();
    }
  };
  // A first round warms up the JIT and the connections of both sides; it is not counted.
  // (Measured here: 7,400/s for a cold 20,000, 12,000/s warm.)
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Then the median of CEILING_ROUNDS rounds: five rounds in a row on this shared machine gave 9,900 to 13,200/s.
  const rounds: number[] = [];
  for (let round = 0; round < CEILING_ROUNDS; round++) {
    next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    rounds.push(Math.round(count / ((performance.now() - started) / 1000)));
  }
  await pool.close();
  return { deliveriesPerSecond: median(rounds), count, rounds };
}
