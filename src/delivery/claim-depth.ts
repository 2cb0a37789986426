import type { DatabaseKind } from '../db/database.js';

// Claims ahead, in batches, and outcomes in batches: the measurements behind each figure are in bench/README.md
// ("The worker's pipeline").
export const MAX_CLAIM = 256;
const MIN_CLAIM = 16;
// A claim runs once this share of the claim capacity is free (and at least MIN_CLAIM): what is still held (half
// the capacity, twice the slots) keeps the slots busy meanwhile, and fewer, larger claims cost PostgreSQL less.
const CLAIM_WHEN_FREE = 0.5;

/** How far ahead a worker claims. */
export interface ClaimDepth {
  /** Claimed (in flight + waiting) up to this many times `concurrency`. */
  ahead: number;
  /**
   * Claimed per webhook (in flight + waiting), as a multiple of its concurrency (`perWebhookConcurrency`): bounds how
   * long a claim can wait for its turn.
   */
  laneAhead: number;
  /**
   * At most this many times its concurrency of one webhook in a claim, and only for webhooks with that much room in
   * their lane, so nothing claimed is ever given back.
   */
  perClaim: number;
  /** How much deeper than this it claims while the backlog is deep, at most (see BacklogDepth). */
  maxDepth: number;
}

// By database: PGlite's one session, behind the outcome batches, gains from fewer, larger claims (bench/README.md).
// PGlite stays at its depth: deeper, its peak RSS passed its 300 MB in a busy drain (bench/README.md, "Contention").
export const CLAIM_DEPTH: Record<DatabaseKind, ClaimDepth> = {
  postgres: { ahead: 4, laneAhead: 2, perClaim: 1, maxDepth: 8 },
  pglite: { ahead: 8, laneAhead: 4, perClaim: 2, maxDepth: 1 },
};

/** A worker's bounds on attempts in flight (WorkerOptions): in the process, and to one webhook. */
export interface Concurrency {
  concurrency: number;
  perWebhookConcurrency: number;
}

/** The next claim's bounds. */
export interface ClaimSize {
  /** At most this many: the room left in the claim capacity, and never more than a claim's maximum. */
  limit: number;
  /** A claim waits (while anything is held) until `limit` has reached this: fewer, larger claims. */
  claimAt: number;
  /** At most this many of one webhook. */
  perWebhook: number;
}

/** The next claim's bounds at claim depth `depth`, with `held` claimed here already (those of the lanes that move). */
export function claimSize(concurrency: Concurrency, base: ClaimDepth, depth: number, held: number): ClaimSize {
  const capacity = concurrency.concurrency * base.ahead * depth;
  const maxClaim = MAX_CLAIM * depth;
  return {
    limit: Math.min(capacity - held, maxClaim),
    claimAt: Math.min(Math.max(MIN_CLAIM, Math.ceil(capacity * CLAIM_WHEN_FREE)), capacity, maxClaim),
    perWebhook: concurrency.perWebhookConcurrency * base.perClaim * depth,
  };
}

/** A claim came back full: its limit, or some webhook's share (that webhook has more due). */
export function claimCameBackFull(claimed: readonly { webhookId: number }[], limit: number, perWebhook: number): boolean {
  if (claimed.length >= limit) return true;
  const perWebhookCount = new Map<number, number>();
  for (const d of claimed) {
    const count = (perWebhookCount.get(d.webhookId) ?? 0) + 1;
    perWebhookCount.set(d.webhookId, count);
    if (count >= perWebhook) return true;
  }
  return false;
}

/** What one claim found, and what it was allowed. */
export interface ClaimFound {
  claimed: readonly { webhookId: number }[];
  limit: number;
  perWebhook: number;
  /** Some webhooks were left out of the claim (no room in their lane, or held back). */
  someExcluded: boolean;
}

/**
 * Sets the claim depth from what each claim found. A claim that came back full while this process sent at least the
 * previous claim's worth since it, says the backlog is deeper than the claims: the next claims go twice as deep, up
 * to CLAIM_DEPTH's maxDepth (lanes, capacity, shares and outcome batches alike), so PostgreSQL sees fewer, larger
 * statements and a late round trip on a busy machine finds claimed work still waiting. A claim that came back short
 * says it is shallow: depth 1 again, so a shallow queue's deliveries are claimed as soon as they are due, as before.
 * An empty claim while lanes were left out for want of room says nothing.
 */
export class BacklogDepth {
  #sentAtLastClaim = 0;
  #lastClaimSize = 0;

  constructor(private readonly maxDepth: number) {}

  /**
   * The depth after this claim, given the depth it was made at and the attempts this process has finished so far;
   * undefined when the claim says nothing (the depth stays).
   */
  afterClaim(found: ClaimFound, depth: number, finishedCount: number): number | undefined {
    if (found.claimed.length === 0 && found.someExcluded) return undefined;
    const sentSince = finishedCount - this.#sentAtLastClaim;
    const previous = this.#lastClaimSize;
    this.#sentAtLastClaim = finishedCount;
    this.#lastClaimSize = found.claimed.length;
    if (!claimCameBackFull(found.claimed, found.limit, found.perWebhook)) return 1;
    return previous > 0 && sentSince >= previous ? Math.min(depth * 2, this.maxDepth) : depth;
  }
}
