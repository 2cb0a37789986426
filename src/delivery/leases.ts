import { OutageWarning } from '../db/outage-warning.js';
import type { Logger } from '../logger.js';

const LEASE_MARGIN_MS = 5_000;
// A lease renewal that failed (the database away) is tried again after this long.
const RENEW_RETRY_MS = 1_000;

/**
 * How long a claim is held: long enough for it to wait for a slot (at most `ahead` - 1 rounds of attempts are ahead
 * of it, each bounded by the time-out) and be attempted, so a live worker's claim never lapses.
 */
export function leaseMsFor(requestTimeoutMs: number, ahead: number): number {
  return requestTimeoutMs * (1 + ahead) + LEASE_MARGIN_MS;
}

/**
 * How long after its claim a delivery still held (waiting, or in flight) has its lease renewed: with the time of an
 * attempt and the margin left before the lease ends. A claim of depth 1 never waits that long (see leaseMsFor); a
 * deeper one may, behind slow receivers.
 */
export function renewAfterMsFor(leaseMs: number, requestTimeoutMs: number): number {
  return Math.max(leaseMs - requestTimeoutMs - LEASE_MARGIN_MS, leaseMs / 2);
}

/** The lease in force, read at each use (the settings may change). */
export interface LeaseTerms {
  leaseMs: number;
  renewAfterMs: number;
}

/** Deliveries claimed together, and when those of them still held have their leases renewed. */
interface HeldClaims<T> {
  renewAt: number;
  deliveries: T[];
}

/**
 * The claims a process holds (claimed, not yet ended or given back), and the renewal of their leases: a deep claim
 * behind slow receivers may wait longer than its lease, and a lease that ran out lets another claim send it a second
 * time. In a drain that keeps up, nothing is held that long and a check costs a comparison of two numbers.
 */
export class HeldLeases<T> {
  readonly #open = new Set<T>();
  #held: HeldClaims<T>[] = [];
  #nextRenewalAt = Infinity;
  #renewing: Promise<void> | undefined;
  readonly #outage: OutageWarning;

  constructor(
    /** Extends the leases of these claims to `leaseMs` from now (renewLeases). */
    private readonly renew: (due: T[], leaseMs: number) => Promise<unknown>,
    private readonly terms: () => LeaseTerms,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#outage = new OutageWarning(log, 'could not renew the leases of deliveries held here; past their lease another claim may send them again', 'lease renewals work again');
  }

  /** Deliveries just claimed, held until they end (or are given back). */
  hold(claimed: T[], claimedAt: number): void {
    for (const d of claimed) this.#open.add(d);
    this.#schedule(claimed, claimedAt + this.terms().renewAfterMs);
  }

  /** A delivery's attempt ended, or its claim was given back: its lease is not renewed again. */
  letGo(delivery: T): void {
    this.#open.delete(delivery);
  }

  /**
   * Renews, in one statement, the leases of the deliveries held longer than `renewAfterMs`; one renewal at a time,
   * never awaited. A renewal that fails is tried again after RENEW_RETRY_MS.
   */
  renewDue(): void {
    if (this.#renewing || this.#held.length === 0) return;
    const now = this.now();
    if (now < this.#nextRenewalAt) return;
    const due: T[] = [];
    const later: HeldClaims<T>[] = [];
    for (const claims of this.#held) {
      if (claims.renewAt > now) later.push(claims);
      else for (const d of claims.deliveries) if (this.#open.has(d)) due.push(d);
    }
    this.#held = later;
    this.#nextRenewalAt = Math.min(...later.map((c) => c.renewAt));
    if (due.length === 0) return;
    this.#renewing = this.renew(due, this.terms().leaseMs)
      .then(
        () => {
          this.#outage.worked();
          return this.now() + this.terms().renewAfterMs;
        },
        (err: unknown) => {
          this.#outage.failed(err, { count: due.length });
          return this.now() + RENEW_RETRY_MS;
        },
      )
      .then((renewAt) => this.#schedule(due, renewAt))
      .finally(() => (this.#renewing = undefined));
  }

  /** Nothing is held any more: the bookkeeping starts afresh (and lets go of what it kept). */
  forget(): void {
    this.#open.clear();
    this.#held = [];
    this.#nextRenewalAt = Infinity;
  }

  #schedule(deliveries: T[], renewAt: number): void {
    this.#held.push({ renewAt, deliveries });
    this.#nextRenewalAt = Math.min(this.#nextRenewalAt, renewAt);
  }
}
