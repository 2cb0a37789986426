import { describeDbError } from '../db/db-errors.js';
import { OutageWarning } from '../db/outage-warning.js';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database, DatabaseKind } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Keyring } from '../secrets/keyring.js';
import { analyzeQueueIfStale, claimDueDeliveries, recordAttempts, releaseClaims, renewLeases, type AttemptRecord, type ClaimedDelivery } from '../outbox/claims.js';
import { attemptDelivery } from './attempt.js';
import { FailureLog } from './failure-log.js';
import { EndpointCache } from './endpoints.js';
import { Lanes } from './lanes.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { DeliverySender } from './sender.js';

export interface WorkerOptions {
  /** Attempts in flight in this process (a webhook with none in flight may still start one: see Lanes.startNext). */
  concurrency: number;
  /** Attempts in flight to one webhook in this process: one slow receiver cannot take every slot. */
  perWebhookConcurrency: number;
  /** Overrides the lease computed from the time-out (tests). */
  leaseMs?: number | undefined;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 64, perWebhookConcurrency: 16 };

// Claims ahead, in batches, and outcomes in batches: the measurements behind each figure are in bench/README.md
// ("The worker's pipeline").
const MAX_CLAIM = 256;
const MIN_CLAIM = 16;
// A claim runs once this share of the claim capacity is free (and at least MIN_CLAIM): what is still held (half
// the capacity, twice the slots) keeps the slots busy meanwhile, and fewer, larger claims cost PostgreSQL less.
const CLAIM_WHEN_FREE = 0.5;

/** How far ahead a worker claims. */
interface ClaimDepth {
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
  /** How much deeper than this it claims while the backlog is deep, at most (see #followBacklog). */
  maxDepth: number;
}

// By database: PGlite's one session, behind the outcome batches, gains from fewer, larger claims (bench/README.md).
// PGlite stays at its depth: deeper, its peak RSS passed its 300 MB in a busy drain (bench/README.md, "Contention").
const CLAIM_DEPTH: Record<DatabaseKind, ClaimDepth> = {
  postgres: { ahead: 4, laneAhead: 2, perClaim: 1, maxDepth: 8 },
  pglite: { ahead: 8, laneAhead: 4, perClaim: 2, maxDepth: 1 },
};
const LEASE_MARGIN_MS = 5_000;
// A lease renewal that failed (the database away) is tried again after this long.
const RENEW_RETRY_MS = 1_000;
// How long a process leaves alone the deliveries of a webhook whose secret it cannot open, before it tries again.
const HOLD_BACK_MS = 30_000;
// A drain checks the queue's statistics (analyzeQueueIfStale) once it has claimed a full claim's worth, beside the
// claims and never before one: a check at the start of every drain was most of a delivery's latency under
// `immediate` (bench/README.md).
const STATISTICS_CHECK_AFTER = MAX_CLAIM;

/**
 * Where the worker is. Changed only by #enter, which asserts the change is one of these:
 * - idle: no drain; the next firing (`tick`) or `drain()` starts one: draining.
 * - draining: a drain claims due deliveries for the webhooks with room and starts them in their lanes; it waits for
 *   room (an attempt finishing, or after an empty claim a lane gaining room) or a firing, and ends once nothing is
 *   due and its attempts' outcomes are written (idle), or when a claim fails (the database away; idle too).
 * - paused (`pause()`: the schedule is off, or webhooks disabled): claims nothing; the claims not started were given
 *   back. `resume()`: idle. Pings still go out.
 * - finishing: paused while a drain runs: it claims nothing more and ends once its attempts in flight are written
 *   (paused). `resume()`: draining again.
 * - stopping (`stop()`, for good): as paused, and waits for the drain and every outcome to be written: stopped.
 */
export type WorkerMode = 'idle' | 'draining' | 'paused' | 'finishing' | 'stopping' | 'stopped';

const MODE_CHANGES: Record<WorkerMode, readonly WorkerMode[]> = {
  idle: ['draining', 'paused', 'stopping'],
  draining: ['idle', 'finishing', 'stopping'],
  paused: ['idle', 'finishing', 'stopping'],
  finishing: ['paused', 'draining', 'stopping'],
  stopping: ['stopped'],
  stopped: [],
};

/**
 * Sends due deliveries: claims them ahead in batches, attempts them with bounded concurrency (per process and per
 * webhook, webhooks taking turns: see Lanes), and writes the outcomes in batches. `drain()` runs until nothing is
 * due; the schedule calls it, and `stop()` ends it gracefully. One attempt is `attemptDelivery` (attempt.ts); the
 * outcomes are written by an OutcomeWriter (outcome-writer.ts); this class holds the claim loop. A disabled
 * webhook's deliveries are never claimed (the claim walks enabled webhooks only), and a webhook changed by any
 * process is read again with the first claim after the change (EndpointCache).
 */
export class DeliveryWorker {
  #mode: WorkerMode = 'idle';
  readonly #lanes: Lanes<ClaimedDelivery>;
  #slotWaiters: (() => void)[] = [];
  readonly #outcomes: OutcomeWriter;
  readonly #failures: FailureLog;
  readonly #endpoints: EndpointCache;
  #draining: Promise<number> | undefined;
  #statisticsCheck: Promise<void> | undefined;
  // A firing came while the drain claimed or waited: claim again at once, for the webhooks with room. Waiting only for
  // a lane to gain room, one receiver that never answered held every other webhook's new deliveries until its
  // attempts timed out.
  #firedMeanwhile = false;
  #stopped: Promise<void> | undefined;
  #heldBack = new Map<number, number>(); // webhooks whose secrets this process cannot open → until when it claims none of theirs
  readonly #drainOutage: OutageWarning;
  // The claim depth's inputs (see #followBacklog).
  #sentAtLastClaim = 0;
  #lastClaimSize = 0;
  // Claimed here and not yet ended or given back, and when their leases are renewed (see #renewLeases).
  readonly #open = new Set<ClaimedDelivery>();
  #held: HeldClaims[] = [];
  #nextRenewalAt = Infinity;
  #renewing: Promise<void> | undefined;
  readonly #renewalOutage: OutageWarning;

  constructor(
    private readonly db: Database,
    private readonly settings: SettingsStore,
    private readonly sender: DeliverySender,
    /** Opens the webhooks' sealed secrets (see EndpointCache). */
    keyring: Keyring,
    private readonly log: Logger,
    private readonly options: WorkerOptions = DEFAULT_WORKER_OPTIONS,
    /** Counts attempts and times claims and outcome writes (GET /metrics); none in tests that need none. */
    private readonly metrics?: Metrics,
  ) {
    this.#outcomes = new OutcomeWriter(db, log, () => settings.webhooks.autoDisableAfterMs, metrics);
    this.#failures = new FailureLog(log);
    this.#endpoints = new EndpointCache(db, keyring);
    // A failed drain is told once per outage: a firing a second would repeat it.
    this.#drainOutage = new OutageWarning(log, 'delivery drain failed; each firing tries again', 'delivery drains work again');
    this.#renewalOutage = new OutageWarning(log, 'could not renew the leases of deliveries held here; past their lease another claim may send them again', 'lease renewals work again');
    const depth = this.#base;
    this.#lanes = new Lanes({
      concurrency: options.concurrency,
      perWebhookConcurrency: options.perWebhookConcurrency,
      perWebhookClaimed: options.perWebhookConcurrency * depth.laneAhead,
      perClaim: options.perWebhookConcurrency * depth.perClaim,
    });
  }

  /** Where the worker is (see WorkerMode). */
  get mode(): WorkerMode {
    return this.#mode;
  }

  #enter(to: WorkerMode): void {
    if (to === this.#mode) return;
    if (!MODE_CHANGES[this.#mode].includes(to)) throw new Error(`delivery worker: no change from ${this.#mode} to ${to}`);
    this.#mode = to;
  }

  /** How far ahead a worker claims at depth 1 (see #followBacklog for the depth). */
  get #base(): ClaimDepth {
    return CLAIM_DEPTH[this.db.kind];
  }

  /**
   * How long a claim is held: long enough for it to wait for a slot (at most `ahead` - 1 rounds of attempts are
   * ahead of it, each bounded by the time-out) and be attempted, so a live worker's claim never lapses.
   */
  get leaseMs(): number {
    if (this.options.leaseMs !== undefined) return this.options.leaseMs;
    return this.settings.webhooks.requestTimeoutMs * (1 + this.#base.ahead) + LEASE_MARGIN_MS;
  }

  /**
   * How long after its claim a delivery still held here (waiting, or in flight) has its lease renewed: with the time
   * of an attempt and the margin left before the lease ends. A claim of depth 1 never waits that long (see leaseMs);
   * a deeper one may, behind slow receivers.
   */
  get #renewAfterMs(): number {
    const leaseMs = this.leaseMs;
    return Math.max(leaseMs - this.settings.webhooks.requestTimeoutMs - LEASE_MARGIN_MS, leaseMs / 2);
  }

  /**
   * Sends everything due, until nothing is due and nothing is in flight, and answers how many were attempted. A call
   * while a drain runs makes it claim again at once (for the webhooks with room) and answers that drain's promise.
   */
  drain(): Promise<number> {
    if (this.#draining) {
      this.#firedMeanwhile = true;
      this.#wakeSlotWaiters();
      return this.#draining;
    }
    if (this.#mode === 'idle') this.#enter('draining');
    else if (this.#mode === 'paused') this.#enter('finishing');
    this.#draining = this.#drainUntilIdle().finally(() => {
      this.#draining = undefined;
      if (this.#mode === 'draining') this.#enter('idle');
      else if (this.#mode === 'finishing') this.#enter('paused');
    });
    return this.#draining;
  }

  /**
   * A firing of the schedule: starts a drain, or has the one under way claim again now. Never waits for it, so a
   * slow attempt never holds a firing; a failed drain is logged, and the next firing starts another.
   */
  tick(): void {
    if (this.#draining) {
      void this.drain();
      return;
    }
    this.drain().then(
      () => this.#drainOutage.worked(),
      (err: unknown) => this.#drainOutage.failed(err),
    );
  }

  /**
   * The schedule is off (`deliveryFrequency` none, or webhooks disabled): claim nothing more, and give back what was
   * claimed but not started. Attempts in flight finish. Pings (attemptNow) still go out.
   */
  async pause(): Promise<void> {
    if (this.#mode === 'idle') this.#enter('paused');
    else if (this.#mode === 'draining') this.#enter('finishing');
    else return;
    this.#wakeSlotWaiters();
    await this.#giveBackWaiting();
  }

  /** The schedule is on again: the next firing claims. */
  resume(): void {
    if (this.#mode === 'paused') this.#enter('idle');
    else if (this.#mode === 'finishing') this.#enter('draining');
  }

  get #mayClaim(): boolean {
    return this.#mode === 'draining' && this.settings.webhooks.enabled;
  }

  async #drainUntilIdle(): Promise<number> {
    let attempted = 0;
    do {
      this.#firedMeanwhile = false;
      try {
        attempted += await this.#claimWhileDue();
      } finally {
        // Claiming stopped (paused, stopping, or the database failed): wait for the attempts in flight, unless a
        // firing asks for claims again meanwhile (resumed).
        await this.#settled(() => this.#firedMeanwhile && this.#mayClaim);
      }
    } while (this.#firedMeanwhile && this.#mayClaim);
    return attempted;
  }

  /** Claims and starts deliveries while any are due; returns with nothing in flight, unless claiming must stop. */
  async #claimWhileDue(): Promise<number> {
    let attempted = 0;
    const lanes = this.#lanes;
    const base = this.#base;
    let statisticsChecked = false;
    while (this.#mayClaim) {
      this.#firedMeanwhile = false;
      const depth = lanes.depth;
      const capacity = this.options.concurrency * base.ahead * depth;
      const maxClaim = MAX_CLAIM * depth;
      const claimAtRoom = Math.min(Math.max(MIN_CLAIM, Math.ceil(capacity * CLAIM_WHEN_FREE)), capacity, maxClaim);
      const perWebhook = this.options.perWebhookConcurrency * base.perClaim * depth;
      const room = Math.min(capacity - lanes.claimedByMovingLanes(), maxClaim);
      if (room < claimAtRoom && lanes.claimed > 0) {
        await this.#slotFreed();
        continue;
      }
      await this.#writeHeldOutcomes();
      const writtenBefore = this.#outcomes.written;
      const claimStartedAt = performance.now();
      const claimedAt = Date.now();
      const excluded = [...lanes.withoutRoom(), ...this.#heldBackWebhooks()];
      let claimed = await claimDueDeliveries(this.db, { limit: room, leaseMs: this.leaseMs, excludedWebhookIds: excluded, perWebhook, turnAfter: lanes.turnAfter });
      this.metrics?.claimed((performance.now() - claimStartedAt) / 1000);
      this.#followBacklog(claimed, room, perWebhook, excluded.length > 0);
      if (claimed.length === 0) {
        if (lanes.claimed === 0) {
          // Outcomes written since this claim looked may have made deliveries due again (a retry step of 0):
          // write any still waiting, and look once more if anything changed.
          await this.#outcomes.flush();
          if (this.#outcomes.written === writtenBefore) break;
          continue;
        }
        // Nothing is due for the webhooks with room. Look again only once a lane has room for a claim (or is
        // gone): waking on every finished attempt made one useless claim per delivery.
        const epoch = lanes.epoch;
        while (lanes.epoch === epoch && lanes.claimed > 0 && this.#mayClaim && !this.#firedMeanwhile) await this.#slotFreed();
        continue;
      }
      // Endpoints whose webhook changed since they were loaded (the claim says so) are read again first.
      const unreadable = await this.#endpoints.load(claimed);
      if (this.#heldBack.size > 0) for (const d of claimed) if (!unreadable.has(d.webhookId)) this.#heldBack.delete(d.webhookId);
      if (unreadable.size > 0) claimed = await this.#holdBack(claimed, unreadable);
      if (!this.#mayClaim) {
        // stop() or pause() came while this claim was on its way: give it back rather than attempt it after.
        await releaseClaims(this.db, claimed).catch((err: unknown) => this.log.error({ err }, 'could not release claims; they go out after their lease'));
        break;
      }
      if (claimed.length === 0) continue;
      attempted += claimed.length;
      this.#hold(claimed, claimedAt);
      lanes.accept(claimed);
      this.#startWaiting();
      if (!statisticsChecked && attempted >= STATISTICS_CHECK_AFTER) {
        statisticsChecked = true;
        this.#checkStatistics();
      }
    }
    return attempted;
  }

  /**
   * Sets the claim depth from what a claim found. A claim that came back full (its limit, or some webhook's share: that
   * webhook has more due) while this process sent at least the previous claim's worth since it, says the backlog is
   * deeper than the claims: the next claims go twice as deep, up to CLAIM_DEPTH's maxDepth (lanes, capacity,
   * shares and outcome batches alike), so PostgreSQL sees fewer, larger statements and a late round trip on a busy
   * machine finds claimed work still waiting. A claim that came back short says it is shallow: depth 1 again, so a
   * shallow queue's deliveries are claimed as soon as they are due, as before. An empty claim while lanes were left
   * out for want of room says nothing.
   */
  #followBacklog(claimed: readonly ClaimedDelivery[], limit: number, perWebhook: number, someExcluded: boolean): void {
    if (claimed.length === 0 && someExcluded) return;
    const lanes = this.#lanes;
    const sentSince = lanes.finishedCount - this.#sentAtLastClaim;
    const previous = this.#lastClaimSize;
    this.#sentAtLastClaim = lanes.finishedCount;
    this.#lastClaimSize = claimed.length;
    let full = claimed.length >= limit;
    if (!full) {
      const perWebhookCount = new Map<number, number>();
      for (const d of claimed) {
        const count = (perWebhookCount.get(d.webhookId) ?? 0) + 1;
        perWebhookCount.set(d.webhookId, count);
        if (count >= perWebhook) full = true;
      }
    }
    const depth = !full ? 1 : previous > 0 && sentSince >= previous ? Math.min(lanes.depth * 2, this.#base.maxDepth) : lanes.depth;
    lanes.depth = depth;
    this.#outcomes.depth = depth;
  }

  /** Deliveries just claimed are held here until their attempt ends (or they are given back): their leases are renewed meanwhile. */
  #hold(claimed: ClaimedDelivery[], claimedAt: number): void {
    for (const d of claimed) this.#open.add(d);
    const renewAt = claimedAt + this.#renewAfterMs;
    this.#held.push({ renewAt, deliveries: claimed });
    this.#nextRenewalAt = Math.min(this.#nextRenewalAt, renewAt);
  }

  /**
   * Renews the leases of the deliveries held here longer than #renewAfterMs, in one statement: a deep claim behind slow
   * receivers may wait longer than its lease, and a lease that ran out lets another claim send it a second time. In a
   * drain that keeps up, nothing is held that long and this costs a comparison of two numbers. Checked whenever an
   * attempt ends (so at least once per time-out while anything is in flight, and so held).
   */
  #renewLeases(): void {
    if (this.#renewing || this.#held.length === 0) return;
    const now = Date.now();
    if (now < this.#nextRenewalAt) return;
    const due: ClaimedDelivery[] = [];
    const later: HeldClaims[] = [];
    for (const claims of this.#held) {
      if (claims.renewAt > now) later.push(claims);
      else for (const d of claims.deliveries) if (this.#open.has(d)) due.push(d);
    }
    this.#held = later;
    this.#nextRenewalAt = Math.min(...later.map((c) => c.renewAt));
    if (due.length === 0) return;
    const leaseMs = this.leaseMs;
    this.#renewing = renewLeases(this.db, due, leaseMs)
      .then(
        () => {
          this.#renewalOutage.worked();
          return Date.now() + this.#renewAfterMs;
        },
        (err: unknown) => {
          this.#renewalOutage.failed(err, { count: due.length });
          return Date.now() + RENEW_RETRY_MS;
        },
      )
      .then((renewAt) => {
        this.#held.push({ renewAt, deliveries: due });
        this.#nextRenewalAt = Math.min(this.#nextRenewalAt, renewAt);
      })
      .finally(() => (this.#renewing = undefined));
  }

  /** Nothing is held: the lease bookkeeping starts afresh (and lets go of what it kept). */
  #forgetHeld(): void {
    if (this.#lanes.claimed > 0) return;
    this.#open.clear();
    this.#held = [];
    this.#nextRenewalAt = Infinity;
  }

  /**
   * The deliveries of webhooks whose secrets this process cannot open (a rolling key change: a secret sealed by a
   * process that already has the new key) are given back at once, their attempt uncounted, and this process claims
   * none of theirs for HOLD_BACK_MS: a process with the key sends them meanwhile. Every other webhook's deliveries in
   * the claim go on (before, the whole claim stayed locked until its lease ended, counted as attempted). Told once
   * per webhook, naming key ids. Answers the rest of the claim.
   */
  async #holdBack(claimed: ClaimedDelivery[], unreadable: Map<number, string>): Promise<ClaimedDelivery[]> {
    const until = Date.now() + HOLD_BACK_MS;
    for (const [webhookId, reason] of unreadable) {
      if (!this.#heldBack.has(webhookId)) {
        this.log.warn({ webhookId, reason }, `this process cannot open the webhook's secret: its deliveries are left to processes that can, and tried here again every ${HOLD_BACK_MS / 1000} s`);
      }
      this.#heldBack.set(webhookId, until);
    }
    const given = claimed.filter((d) => unreadable.has(d.webhookId));
    await releaseClaims(this.db, given);
    return claimed.filter((d) => !unreadable.has(d.webhookId));
  }

  /** The webhooks held back now (see #holdBack); one whose time is over is claimed for again (and told again if it still fails). */
  #heldBackWebhooks(): number[] {
    const now = Date.now();
    const ids: number[] = [];
    for (const [webhookId, until] of this.#heldBack) {
      if (until > now) ids.push(webhookId);
    }
    return ids;
  }

  /**
   * Outcomes held since the database went away are written before anything is claimed again: past their lease their
   * rows are due again, and a claim that came first sent each of them a second time (198 duplicates after a 60 s
   * outage). Throws while they still cannot be written: the drain ends, and the next firing tries again.
   */
  async #writeHeldOutcomes(): Promise<void> {
    if (!this.#outcomes.holding) return;
    await this.#outcomes.flush();
    if (this.#outcomes.holding) throw new Error('the outcomes of attempts made before the database went away cannot be written yet; nothing is claimed until they are');
  }

  /**
   * One attempt at once, outside the schedule (ping): answers when its outcome is written. The endpoint is read
   * afresh: an admin pinging after changing the URL or the secret checks the new ones.
   */
  async attemptNow(delivery: ClaimedDelivery): Promise<void> {
    const unreadable = await this.#endpoints.reload([delivery.webhookId]);
    const reason = unreadable.get(delivery.webhookId);
    // A ping this process cannot sign ends failed at once, saying why: an admin asked for one attempt now.
    const record = reason === undefined ? await this.#attempt(delivery) : unsignedPing(delivery, reason);
    if (record) await recordAttempts(this.db, [record]);
  }

  /** Stops claiming, lets attempts in flight finish (within the time-out), gives back waiting claims, writes every outcome. */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    this.#enter('stopping');
    this.#wakeSlotWaiters();
    await this.#giveBackWaiting();
    await this.#draining?.catch(() => undefined); // its failure is its caller's to report
    await this.#settled();
    await this.#statisticsCheck;
    this.#enter('stopped');
  }

  /** ANALYZE the queue if its statistics lag its backlog (see STATISTICS_CHECK_AFTER): one at a time, never awaited. */
  #checkStatistics(): void {
    if (this.#statisticsCheck) return;
    this.#statisticsCheck = analyzeQueueIfStale(this.db)
      .then(
        () => undefined,
        // The claims go on with the plans they have; the next large drain checks again.
        (err: unknown) => this.log.warn({ error: describeDbError(err) }, 'could not check the delivery queue statistics'),
      )
      .finally(() => (this.#statisticsCheck = undefined));
  }

  /** Gives back the claims not started yet: due at once, their attempt uncounted. */
  async #giveBackWaiting(): Promise<void> {
    const waiting = this.#lanes.takeWaiting();
    if (waiting.length === 0) return;
    for (const d of waiting) this.#open.delete(d);
    this.#wakeSlotWaiters();
    await releaseClaims(this.db, waiting).catch((err: unknown) => this.log.error({ err }, 'could not release waiting claims; they go out after their lease'));
  }

  /** Starts waiting deliveries while the lanes allow (see Lanes.startNext). */
  #startWaiting(): void {
    while (this.#mode !== 'stopping' && this.#mode !== 'stopped') {
      const delivery = this.#lanes.startNext();
      if (!delivery) return;
      void this.#attempt(delivery).then((record) => {
        if (record) this.#outcomes.add(record);
        this.#open.delete(delivery);
        this.#lanes.finished(delivery);
        this.#startWaiting();
        this.#wakeSlotWaiters();
      });
    }
  }

  /** Signs and sends one delivery; never throws. Undefined when its webhook is gone (deleted with its deliveries). */
  async #attempt(delivery: ClaimedDelivery): Promise<AttemptRecord | undefined> {
    const endpoint = this.#endpoints.get(delivery.webhookId);
    if (!endpoint) return undefined;
    const record = await attemptDelivery(delivery, endpoint, { sender: this.sender, settings: this.settings.webhooks, log: this.log });
    this.metrics?.attempt(delivery.webhookId, record.status, record.logEntry.durationMs / 1000);
    if (record.status !== 'sent') this.#failures.failed(delivery, record);
    return record;
  }

  /**
   * Every claimed attempt finished and its outcome written (or, with the database away, left to the lease); or, as
   * soon as `interrupted()` says so, nothing more.
   */
  async #settled(interrupted: () => boolean = () => false): Promise<void> {
    while (this.#lanes.claimed > 0) {
      if (interrupted()) return;
      await this.#slotFreed();
    }
    this.#forgetHeld();
    await this.#outcomes.settle();
  }

  #slotFreed(): Promise<void> {
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #wakeSlotWaiters(): void {
    this.#renewLeases();
    if (this.#slotWaiters.length === 0) return;
    const waiters = this.#slotWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}

/** Deliveries claimed together, and when those of them still held here have their leases renewed. */
interface HeldClaims {
  renewAt: number;
  deliveries: ClaimedDelivery[];
}

/** The outcome of a ping whose webhook's secret this process cannot open: failed, not sent. */
function unsignedPing(delivery: ClaimedDelivery, reason: string): AttemptRecord {
  const attemptedAt = Date.now();
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
