/**
 * What the lanes allow, fixed for a worker (see DeliveryWorker for where each comes from). The claim limits are at
 * depth 1; a deeper claim (see Lanes.depth) scales them for the lanes that move.
 */
export interface LaneLimits {
  /** Attempts in flight in the process (a webhook with none in flight may still start one beyond it: see startNext). */
  concurrency: number;
  /** Attempts in flight to one webhook. */
  perWebhookConcurrency: number;
  /** Claimed (in flight and waiting) for one webhook at most. */
  perWebhookClaimed: number;
  /** The room a lane needs before it is claimed for again: at most this many of one webhook in a claim. */
  perClaim: number;
}

/**
 * A lane with attempts in flight and none finished or started for this long is stalled: its claims stop counting
 * against the process's claim capacity (see claimedByMovingLanes).
 */
export const STALLED_AFTER_MS = 1_000;

interface Lane<T> {
  running: number;
  waiting: T[];
  /** When an attempt of this lane last started from idle or finished (`now()`). */
  progressAt: number;
}

/**
 * The claimed deliveries of one process, by webhook: a lane per webhook with deliveries claimed, in turn order, and
 * the counts the claim loop decides by. Holds no database and sends nothing: the worker claims, asks which delivery
 * to start next, and says when an attempt finished. Webhooks take turns: a lane that starts an attempt goes to the
 * back, and the next claim starts after the last webhook served.
 */
export class Lanes<T extends { webhookId: number }> {
  #claimed = 0; // in flight or waiting for a slot
  #inFlight = 0;
  #lanes = new Map<number, Lane<T>>(); // in turn order
  #turnAfter = 0;
  #epoch = 0;
  #finished = 0;
  #depth = 1;

  constructor(
    private readonly limits: LaneLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Claimed here and not finished: in flight or waiting. */
  get claimed(): number {
    return this.#claimed;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The last webhook served: the next claim starts after it. */
  get turnAfter(): number {
    return this.#turnAfter;
  }

  /** Moves when a lane gains room for a claim or goes away: what a loop that found nothing due waits for. */
  get epoch(): number {
    return this.#epoch;
  }

  /** Attempts finished so far: how fast the lanes empty, which the worker's claim depth follows. */
  get finishedCount(): number {
    return this.#finished;
  }

  /**
   * How deep the worker claims now (1, or more while the backlog is deep): a moving lane holds up to this many times
   * `perWebhookClaimed` and is claimed for once it has this many times `perClaim` of room. A stalled lane keeps the
   * limits of depth 1: its claims only wait on its own receiver.
   */
  get depth(): number {
    return this.#depth;
  }

  set depth(depth: number) {
    if (!Number.isSafeInteger(depth) || depth < 1) throw new RangeError('depth must be a positive integer');
    if (depth !== this.#depth) this.#epoch++; // lanes may have gained room (or lost it)
    this.#depth = depth;
  }

  /** The webhooks whose lane has too little room for a claim: none of theirs is claimed. */
  withoutRoom(): number[] {
    const now = this.now();
    const without: number[] = [];
    for (const [id, lane] of this.#lanes) {
      const depth = this.#stalled(lane, now) ? 1 : this.#depth;
      if (this.#room(lane, depth) < this.limits.perClaim * depth) without.push(id);
    }
    return without;
  }

  #room(lane: Lane<T>, depth: number): number {
    return this.limits.perWebhookClaimed * depth - lane.running - lane.waiting.length;
  }

  #stalled(lane: Lane<T>, now: number): boolean {
    return lane.running > 0 && now - lane.progressAt > STALLED_AFTER_MS;
  }

  /**
   * Claims held here, less those of stalled lanes (attempts in flight, none finished for STALLED_AFTER_MS): a stalled
   * lane's claims wait on its own receiver, and each lane holds at most `perWebhookClaimed`, so leaving them out bounds
   * what is held by the number of webhooks while the other webhooks keep being claimed for (nine black holes holding
   * 9 × 32 claims cannot stop claims for the others).
   */
  claimedByMovingLanes(): number {
    const now = this.now();
    let stalled = 0;
    for (const lane of this.#lanes.values()) {
      if (this.#stalled(lane, now)) stalled += lane.running + lane.waiting.length;
    }
    return this.#claimed - stalled;
  }

  /** Puts claimed deliveries in their webhooks' lanes (the claim took no more than each has room for). */
  accept(claimed: readonly T[]): void {
    if (claimed.length === 0) return;
    const served = [...new Set(claimed.map((d) => d.webhookId))];
    const later = served.filter((id) => id > this.#turnAfter);
    this.#turnAfter = Math.max(...(later.length > 0 ? later : served));
    for (const delivery of claimed) {
      let lane = this.#lanes.get(delivery.webhookId);
      if (!lane) {
        lane = { running: 0, waiting: [], progressAt: this.now() };
        this.#lanes.set(delivery.webhookId, lane);
      }
      lane.waiting.push(delivery);
      this.#claimed++;
    }
  }

  /**
   * The next waiting delivery to start, now counted in flight, or undefined when none may start. Webhooks take turns.
   * Beyond the process's bound, a webhook with nothing in flight may still start one attempt (up to
   * `perWebhookConcurrency` such attempts): slow receivers holding every slot (four black holes at 16 each fill 64)
   * cannot keep the other webhooks waiting for their time-outs.
   */
  startNext(): T | undefined {
    const { concurrency, perWebhookConcurrency } = this.limits;
    if (this.#inFlight >= concurrency + perWebhookConcurrency) return undefined;
    const full = this.#inFlight >= concurrency;
    for (const [webhookId, lane] of this.#lanes) {
      if (lane.waiting.length === 0 || lane.running >= perWebhookConcurrency || (full && lane.running > 0)) continue;
      if (lane.running === 0) lane.progressAt = this.now();
      lane.running++;
      this.#inFlight++;
      // To the back of the turn order.
      this.#lanes.delete(webhookId);
      this.#lanes.set(webhookId, lane);
      return lane.waiting.shift()!;
    }
    return undefined;
  }

  /** An attempt started by startNext has finished (its outcome is the worker's). */
  finished(delivery: T): void {
    const lane = this.#lanes.get(delivery.webhookId);
    if (!lane || lane.running === 0) throw new Error(`webhook ${delivery.webhookId} has no attempt in flight`);
    lane.progressAt = this.now();
    lane.running--;
    this.#inFlight--;
    this.#claimed--;
    this.#finished++;
    if (lane.running === 0 && lane.waiting.length === 0) {
      this.#lanes.delete(delivery.webhookId);
      this.#epoch++;
    } else if (this.#room(lane, this.#depth) === this.limits.perClaim * this.#depth) {
      this.#epoch++; // this lane has just gained room for a claim
    }
  }

  /** Takes back every delivery not started (to give the claims back); lanes left with nothing in flight go. */
  takeWaiting(): T[] {
    const waiting: T[] = [];
    for (const [webhookId, lane] of this.#lanes) {
      waiting.push(...lane.waiting.splice(0));
      if (lane.running === 0) this.#lanes.delete(webhookId);
    }
    if (waiting.length > 0) {
      this.#claimed -= waiting.length;
      this.#epoch++;
    }
    return waiting;
  }
}
