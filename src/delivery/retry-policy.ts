/**
 * What happens after an attempt: the three branches of a failed attempt are exhausted (or a ping, which is
 * never retried), retry at the next step of the schedule, or — on success — sent. The schedule is data.
 */
export type AttemptDecision = { status: 'sent' } | { status: 'failed' } | { status: 'pending'; nextAttemptAt: number };

export const JITTER = 0.2;
export const MAX_RETRY_AFTER_MS = 24 * 3600_000;

export interface AttemptFacts {
  ok: boolean;
  /** The attempt's number, 1 for the first (attempts are counted when claimed). */
  attempt: number;
  isPing: boolean;
  /** From a `Retry-After` on 429 or 503. */
  retryAfterMs?: number | undefined;
}

export function decideAfterAttempt(facts: AttemptFacts, retryScheduleMs: readonly number[], now: number, random: () => number = Math.random): AttemptDecision {
  if (facts.ok) return { status: 'sent' };
  const step = retryScheduleMs[facts.attempt - 1];
  if (facts.isPing || step === undefined) return { status: 'failed' };
  // ±20% jitter spreads the retries of many deliveries that failed together (a receiver outage).
  const jittered = Math.round(step * (1 - JITTER + 2 * JITTER * random()));
  // A receiver's Retry-After wins when it asks for longer, within a day.
  const wait = Math.max(jittered, Math.min(facts.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return { status: 'pending', nextAttemptAt: now + wait };
}
