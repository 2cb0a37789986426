import type { Logger } from '../logger.js';
import type { AttemptRecord, ClaimedDelivery } from '../outbox/claims.js';

// How long a process leaves alone the deliveries of a webhook whose secret it cannot open, before it tries again.
export const HOLD_BACK_MS = 30_000;

/** A claim sorted by whether this process can sign for its webhooks. */
export interface SortedClaim<T> {
  send: T[];
  /** To be given back at once, their attempt uncounted (releaseClaims). */
  giveBack: T[];
}

/**
 * The webhooks whose secrets this process cannot open (a rolling key change: a secret sealed by a process that
 * already has the new key). Their deliveries are given back at once and this process claims none of theirs for
 * HOLD_BACK_MS: a process with the key sends them meanwhile. Every other webhook's deliveries in the claim go on
 * (before, the whole claim stayed locked until its lease ended, counted as attempted). Told once per webhook, naming
 * key ids.
 */
export class HeldBackWebhooks {
  readonly #until = new Map<number, number>(); // webhook → until when this process claims none of its deliveries

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The webhooks held back now, left out of the claims; one whose time is over is claimed for again. */
  ids(): number[] {
    const now = this.now();
    const ids: number[] = [];
    for (const [webhookId, until] of this.#until) {
      if (until > now) ids.push(webhookId);
    }
    return ids;
  }

  /**
   * Sorts a claim whose endpoints were just loaded (EndpointCache.load answers the webhooks it could not open, with
   * why). A webhook held back before whose secret opens now is forgotten; one that still fails is told again.
   */
  sort<T extends { webhookId: number }>(claimed: T[], unreadable: ReadonlyMap<number, string>): SortedClaim<T> {
    if (this.#until.size > 0) for (const d of claimed) if (!unreadable.has(d.webhookId)) this.#until.delete(d.webhookId);
    if (unreadable.size === 0) return { send: claimed, giveBack: [] };
    const until = this.now() + HOLD_BACK_MS;
    for (const [webhookId, reason] of unreadable) {
      if (!this.#until.has(webhookId)) {
        this.log.warn({ webhookId, reason }, `this process cannot open the webhook's secret: its deliveries are left to processes that can, and tried here again every ${HOLD_BACK_MS / 1000} s`);
      }
      this.#until.set(webhookId, until);
    }
    return { send: claimed.filter((d) => !unreadable.has(d.webhookId)), giveBack: claimed.filter((d) => unreadable.has(d.webhookId)) };
  }
}

/**
 * The outcome of a ping whose webhook's secret this process cannot open: failed at once, saying why, not held back
 * as a claim is: an admin asked for one attempt now.
 */
export function unsignedPing(delivery: ClaimedDelivery, reason: string, attemptedAt = Date.now()): AttemptRecord {
  const error = `not sent: this process cannot open the webhook's secret (${reason})`;
  return {
    id: delivery.id,
    leaseToken: delivery.leaseToken,
    status: 'failed',
    nextAttemptAt: null,
    attemptedAt,
    responseStatus: null,
    error,
    logEntry: { attemptedAt: new Date(attemptedAt).toISOString(), url: '', durationMs: 0, error },
  };
}
