import type { Logger } from '../logger.js';
import type { AttemptRecord, ClaimedDelivery } from '../outbox/claims.js';

// At most one warn line per webhook per this long: a dead receiver with a backlog of thousands fails thousands of
// attempts a minute, and the log must stay readable (and cheap) while it does. What the interval held back is counted
// in the next line.
const DEFAULT_INTERVAL_MS = 60_000;

interface Window {
  loggedAt: number;
  failedAttempts: number;
  gaveUp: number;
}

/**
 * Failed attempts and deliveries given up, logged at warn, rate-limited per webhook: the first failure of a webhook
 * is logged at once, then at most one line per interval, carrying how many failed attempts and given-up deliveries
 * the interval held back. Never the URL (it may carry a token in its query) nor a header: the webhook id finds them.
 */
export class FailureLog {
  readonly #windows = new Map<number, Window>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = DEFAULT_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** One finished attempt that did not end `sent`. */
  failed(delivery: Pick<ClaimedDelivery, 'id' | 'webhookId' | 'attempts'>, record: Pick<AttemptRecord, 'status' | 'error' | 'responseStatus' | 'nextAttemptAt'>): void {
    const now = this.now();
    let window = this.#windows.get(delivery.webhookId);
    if (window && now - window.loggedAt < this.intervalMs) {
      window.failedAttempts++;
      if (record.status === 'failed') window.gaveUp++;
      return;
    }
    if (this.#windows.size > 10_000) this.#forgetOld(now); // bounded, however many webhooks fail
    const heldBack = window ? { heldBackFailedAttempts: window.failedAttempts, heldBackGivenUp: window.gaveUp } : {};
    window = { loggedAt: now, failedAttempts: 0, gaveUp: 0 };
    this.#windows.set(delivery.webhookId, window);
    const fields = {
      webhookId: delivery.webhookId,
      deliveryId: delivery.id,
      attempt: delivery.attempts,
      error: record.error ?? undefined,
      responseStatus: record.responseStatus ?? undefined,
      nextAttemptAt: record.nextAttemptAt === null ? undefined : new Date(record.nextAttemptAt).toISOString(),
      ...heldBack,
    };
    if (record.status === 'failed') this.log.warn(fields, 'delivery failed: its retries are used up; redeliver it once the receiver works');
    else this.log.warn(fields, 'delivery attempt failed: retried on the schedule');
  }

  #forgetOld(now: number): void {
    for (const [webhookId, window] of this.#windows) if (now - window.loggedAt >= this.intervalMs) this.#windows.delete(webhookId);
  }
}
