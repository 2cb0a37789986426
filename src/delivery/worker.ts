import { describeDbError } from '../db/db-errors.js';
import { OutageWarning } from '../db/outage-warning.js';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database, DatabaseKind } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Keyring } from '../secrets/keyring.js';
import { analyzeQueueIfStale, claimDueDeliveries, recordAttempts, releaseClaims, type AttemptRecord, type ClaimedDelivery } from '../outbox/claims.js';
import { attemptDelivery } from './attempt.js';
import { FailureLog } from './failure-log.js';
import { EndpointCache } from './endpoints.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { DeliverySender } from './sender.js';

export interface WorkerOptions {
  /** Attempts in flight in this process (a webhook with none in flight may still start one: see #pump). */
  concurrency: number;
  /** Attempts in flight to one webhook in this process: one slow receiver cannot take every slot. */
  perWebhookConcurrency: number;
  /** Overrides the lease computed from the time-out (tests). */
  leaseMs?: number | undefined;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 64, perWebhookConcurrency: 16 };

/*
 * The pipeline, and what was measured choosing it (PostgreSQL 15, 2 cores, 30,000 deliveries over 10 webhooks,
 * a 204 receiver in another process, the worker in-process):
 * - claim only when 16 of 64 slots were free, outcomes written 5 ms apart: 2,600/s. Claims averaged 27 rows and
 *   6 ms, one after the other, and only 13 attempts were in flight when a claim ran: the sends starved.
 * - claim ahead (up to 4 × concurrency claimed), claims as HOT updates, outcomes in batches of up to 512: 3,700/s,
 *   now with 64 in flight; the process was CPU-bound (88% of a core), sends taking 15 ms on a busy loop.
 * - sends without an AbortController per attempt and with parsed URLs kept: 4,700/s.
 * - a claim takes at most one lane's room per webhook, and after an empty claim the loop waits for a lane to gain
 *   room instead of claiming again on every finished attempt: 7,900/s (PGlite: 400/s to 1,800/s).
 * - claims probe each webhook's own due range (see the due index in the migration), so a claim never walks the
 *   backlog of webhooks it excludes: with 1,000,000 due it ran at 1,150/s before.
 * - claim only once half the claim capacity is free (was: 16 slots), outcomes written 256 at most a statement, 20 ms
 *   apart (was: 512, 10 ms); 50,000 deliveries, 3 interleaved rounds on a quiet machine: claims 763–810 → 490–507
 *   (~100 rows each), outcome writes 390–395 → 223–236, PostgreSQL 60–62 µs a delivery → 49–53, the service
 *   98–102 µs → 91–94; drain 8,224–8,547/s → 8,553–9,450/s (HTTP ceiling 22,300–23,100/s). Four rounds under load
 *   (6–9) agreed: PostgreSQL 72–144 µs → 61–83. Claims of up to 32 a webhook in lanes of 64 on top (~128 rows a
 *   claim), under that load: PostgreSQL no cheaper (76–84 µs), drain no faster: not kept.
 * - again on a quiet machine (24 November, fourth sitting: drains of 100,000, each by a fresh process, interleaved;
 *   HTTP ceiling ~49,000/s): sampled every 5 ms, 64 attempts were in flight 89% of the time (mean 61), ~115 held,
 *   a claim running 64–67% of the time, so the slots stay full and a slot is held 3.5 ms (the HTTP exchange 2.5).
 *   Yet more slots do not help: concurrency 128 or 256 (lanes of 32) ran at 17,900–19,200/s against 17,500–19,500.
 *   Claiming further ahead, 8 times the slots with lanes of 4 (see ClaimDepth; claims of ~160 rows, not ~100): 18,200
 *   → 19,200/s over 5 rounds, 18,000 → 18,600 over 4 more (+3–5%), and lanes of 4 alone 17,600/s; not kept on
 *   PostgreSQL, as the lease (see leaseMs) would double for that (PGlite gains more: CLAIM_DEPTH). Claims of 32 a
 *   webhook on top: 19,900 and 17,900/s against 19,400 and 19,200. Claiming once a quarter is free: 16,400–18,800/s
 *   against 19,200–19,400, worse. Starting attempts only in groups of 8 or 16 (so the receiver gets its requests in
 *   bursts): 18,900–19,700/s and 18,000–19,600/s against 18,500–20,000, no change. The drain waits on round trips
 *   between the processes (bench/README.md).
 * Slow receivers: a drain lasts while anything it claimed is in flight, so every firing of the schedule makes it
 * claim again at once, for the webhooks with room. Waiting only for a lane to gain room, one receiver that never
 * answered held every other webhook's new deliveries until its attempts timed out (0.5 s of latency became 10 s),
 * and one that trickled its answer held them for hours. Each attempt has one total deadline (see the sender).
 */
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
}

/*
 * By database. PostgreSQL: see the pipeline's measurements above. PGlite: every statement crosses to the embedded
 * database's thread and waits its turn on its one session, behind the outcome batches (a claim was running 82% of
 * a drain there), and that thread is the drain's limit: fewer, larger claims spend less of it. Measured on a quiet
 * machine (24 November, fourth sitting, drains of 100,000 by fresh processes, interleaved): claims of ~100 rows
 * (this PostgreSQL depth) 14,250–15,200/s over 6 rounds; lanes of 4 and claims of 32 a webhook (~130 rows)
 * 14,300–16,200/s over 3; claiming 8 times the slots ahead on top (~190 rows, 530 claims instead of 980)
 * 15,150–17,750/s over 6 rounds, 6–17% above the round's base in each; 8 ahead with claims of 16 a webhook
 * 14,800–16,500/s. Deeper still, 16 ahead with lanes of 8 and claims of up to 512 rows (~420): 17,100–19,000/s
 * against 16,600–18,000/s over 3 rounds (+2–6%), not worth a lease of 17 times the time-out. The lease (leaseMs)
 * grows with `ahead`, to 95 s at the default 10 s time-out; a killed embedded process's claims are released when
 * the next one starts (service.ts), so it does not delay them.
 */
const CLAIM_DEPTH: Record<DatabaseKind, ClaimDepth> = {
  postgres: { ahead: 4, laneAhead: 2, perClaim: 1 },
  pglite: { ahead: 8, laneAhead: 4, perClaim: 2 },
};
const LEASE_MARGIN_MS = 5_000;
// A drain checks the queue's statistics (analyzeQueueIfStale) once it has claimed this many deliveries (a full
// claim's worth): a small drain has no backlog that could have outgrown them. It ran at the start of every drain
// before: after a 100,000-delivery drain, with the due index full of entries not yet vacuumed, the check took
// 14–21 ms, and under `immediate`, where every burst of events starts a drain, that was most of a delivery's
// latency (PostgreSQL, 1,000 events/s in bursts of 100: p50 35–50 ms → 18–22 ms). It runs beside the claims,
// never before one; soon enough in a large drain that only its first claims plan on stale statistics.
const STATISTICS_CHECK_AFTER = MAX_CLAIM;
// A lane with attempts in flight and none finished or started for this long is stalled: its claims stop counting
// against the process's claim capacity, so nine black holes (9 × 32 claims > 256) cannot stop claims for others.
const STALLED_AFTER_MS = 1_000;

interface WebhookLane {
  running: number;
  waiting: ClaimedDelivery[];
  /** When an attempt of this lane last started from idle or finished (Date.now()). */
  progressAt: number;
}

/**
 * Sends due deliveries: claims them ahead in batches, attempts them with bounded concurrency (per process and per
 * webhook, webhooks taking turns), and writes the outcomes in batches. `drain()` runs until nothing is due; the
 * schedule calls it, and `stop()` ends it gracefully. One attempt is `attemptDelivery` (attempt.ts); the outcomes
 * are written by an OutcomeWriter (outcome-writer.ts); this class holds the claim loop and the lanes. A disabled
 * webhook's deliveries are never claimed (the claim walks enabled webhooks only), and a webhook changed by any
 * process is read again with the first claim after the change (EndpointCache).
 *
 * Its states, and what moves it between them:
 * - idle: no drain. A firing (`tick`) or `drain()` starts one: claiming. A drain whose claim fails (the database
 *   away) waits for its attempts in flight and ends (`tick` logs it): idle, until the next firing.
 * - claiming (a drain): claims due deliveries for the webhooks with room, up to the claim capacity, and starts them
 *   in their lanes. A claim that finds nothing while nothing is held, with no outcome written meanwhile, ends the
 *   drain once the attempts in flight finish and their outcomes are written: idle.
 * - waiting for room: too little room for a claim (less than CLAIM_WHEN_FREE of the capacity), or the last claim
 *   found nothing due for the webhooks with room: waits for an attempt to finish (or, after an empty claim, for a
 *   lane to gain room for a claim or go away), or for a firing, which makes it claim again at once: claiming.
 * - paused (`pause()`: the schedule is off, or webhooks disabled): claims nothing, gives back the claims not started;
 *   attempts in flight finish and the drain ends: idle. `resume()` lets the next firing claim. Pings still go out.
 * - stopping (`stop()`, for good): as paused, and waits for the drain and every outcome to be written.
 */
export class DeliveryWorker {
  #claimed = 0; // claimed by this process and not finished: in flight or waiting for a slot
  #inFlight = 0;
  #lanes = new Map<number, WebhookLane>(); // in turn order: a lane that starts an attempt goes to the back
  #turnAfter = 0; // the last webhook served: the next claim starts after it, so webhooks take turns
  #laneEpoch = 0; // moves when a lane gains room for a claim or goes away
  #slotWaiters: (() => void)[] = [];
  readonly #outcomes: OutcomeWriter;
  readonly #failures: FailureLog;
  readonly #endpoints: EndpointCache;
  #draining: Promise<number> | undefined;
  #statisticsCheck: Promise<void> | undefined;
  #claimAgain = false; // a firing came while the drain waited: claim again now
  #paused = false; // the schedule is off: claim nothing until it is on again
  #stopping = false;
  readonly #drainOutage: OutageWarning;

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
  }

  get #depth(): ClaimDepth {
    return CLAIM_DEPTH[this.db.kind];
  }

  get #perWebhookLimit(): number {
    return this.options.perWebhookConcurrency * this.#depth.laneAhead;
  }

  /** At most this many of one webhook in a claim, and a lane is claimed for only with this much room. */
  get #perClaim(): number {
    return this.options.perWebhookConcurrency * this.#depth.perClaim;
  }

  /**
   * How long a claim is held: long enough for it to wait for a slot (at most `ahead` - 1 rounds of attempts are
   * ahead of it, each bounded by the time-out) and be attempted, so a live worker's claim never lapses.
   */
  get leaseMs(): number {
    if (this.options.leaseMs !== undefined) return this.options.leaseMs;
    return this.settings.webhooks.requestTimeoutMs * (1 + this.#depth.ahead) + LEASE_MARGIN_MS;
  }

  /**
   * Sends everything due, until nothing is due and nothing is in flight, and answers how many were attempted. A call
   * while a drain runs makes it claim again at once (for the webhooks with room) and answers that drain's promise.
   */
  drain(): Promise<number> {
    if (this.#draining) {
      this.#claimAgain = true;
      this.#wakeSlotWaiters();
      return this.#draining;
    }
    this.#draining = this.#drainUntilIdle().finally(() => (this.#draining = undefined));
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
    if (this.#paused) return;
    this.#paused = true;
    this.#wakeSlotWaiters();
    await this.#giveBackWaiting();
  }

  /** The schedule is on again: the next firing claims. */
  resume(): void {
    this.#paused = false;
  }

  get #mayClaim(): boolean {
    return !this.#stopping && !this.#paused && this.settings.webhooks.enabled;
  }

  async #drainUntilIdle(): Promise<number> {
    let attempted = 0;
    do {
      this.#claimAgain = false;
      try {
        attempted += await this.#claimWhileDue();
      } finally {
        // Claiming stopped (paused, stopping, or the database failed): wait for the attempts in flight, unless a
        // firing asks for claims again meanwhile (resumed).
        await this.#settled(() => this.#claimAgain && this.#mayClaim);
      }
    } while (this.#claimAgain && this.#mayClaim);
    return attempted;
  }

  /** Claims and starts deliveries while any are due; returns with nothing in flight, unless claiming must stop. */
  async #claimWhileDue(): Promise<number> {
    let attempted = 0;
    const capacity = this.options.concurrency * this.#depth.ahead;
    const claimAtRoom = Math.min(Math.max(MIN_CLAIM, Math.ceil(capacity * CLAIM_WHEN_FREE)), capacity, MAX_CLAIM);
    let statisticsChecked = false;
    while (this.#mayClaim) {
      this.#claimAgain = false;
      const perWebhook = this.#perClaim;
      const room = Math.min(capacity - this.#claimedByMovingLanes(), MAX_CLAIM);
      if (room < claimAtRoom && this.#claimed > 0) {
        await this.#slotFreed();
        continue;
      }
      const excluded = [...this.#lanes].filter(([, lane]) => this.#perWebhookLimit - lane.running - lane.waiting.length < perWebhook).map(([id]) => id);
      const writtenBefore = this.#outcomes.written;
      const claimStartedAt = performance.now();
      const claimed = await claimDueDeliveries(this.db, { limit: room, leaseMs: this.leaseMs, excludedWebhookIds: excluded, perWebhook, turnAfter: this.#turnAfter });
      this.metrics?.claimed((performance.now() - claimStartedAt) / 1000);
      if (claimed.length === 0) {
        if (this.#claimed === 0) {
          // Outcomes written since this claim looked may have made deliveries due again (a retry step of 0):
          // write any still waiting, and look once more if anything changed.
          await this.#outcomes.flush();
          if (this.#outcomes.written === writtenBefore) break;
          continue;
        }
        // Nothing is due for the webhooks with room. Look again only once a lane has room for a claim (or is
        // gone): waking on every finished attempt made one useless claim per delivery (measured: 11,749 claims
        // of 1.7 rows on average for 20,000 deliveries on PGlite).
        const epoch = this.#laneEpoch;
        while (this.#laneEpoch === epoch && this.#claimed > 0 && this.#mayClaim && !this.#claimAgain) await this.#slotFreed();
        continue;
      }
      // Endpoints whose webhook changed since they were loaded (the claim says so) are read again first.
      await this.#endpoints.load(claimed);
      if (!this.#mayClaim) {
        // stop() or pause() came while this claim was on its way: give it back rather than attempt it after.
        await releaseClaims(this.db, claimed).catch((err: unknown) => this.log.error({ err }, 'could not release claims; they go out after their lease'));
        break;
      }
      const served = [...new Set(claimed.map((d) => d.webhookId))];
      const later = served.filter((id) => id > this.#turnAfter);
      this.#turnAfter = Math.max(...(later.length > 0 ? later : served));
      attempted += claimed.length;
      this.#accept(claimed);
      this.#pump();
      if (!statisticsChecked && attempted >= STATISTICS_CHECK_AFTER) {
        statisticsChecked = true;
        this.#checkStatistics();
      }
    }
    return attempted;
  }

  /**
   * One attempt at once, outside the schedule (ping): answers when its outcome is written. The endpoint is read
   * afresh: an admin pinging after changing the URL or the secret checks the new ones.
   */
  async attemptNow(delivery: ClaimedDelivery): Promise<void> {
    await this.#endpoints.reload([delivery.webhookId]);
    const record = await this.#attempt(delivery);
    if (record) await recordAttempts(this.db, [record]);
  }

  /** Stops claiming, lets attempts in flight finish (within the time-out), gives back waiting claims, writes every outcome. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wakeSlotWaiters();
    await this.#giveBackWaiting();
    await this.#draining?.catch(() => undefined); // its failure is its caller's to report
    await this.#settled();
    await this.#statisticsCheck;
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
    const waiting: ClaimedDelivery[] = [];
    for (const [webhookId, lane] of this.#lanes) {
      waiting.push(...lane.waiting.splice(0));
      if (lane.running === 0) this.#lanes.delete(webhookId);
    }
    if (waiting.length === 0) return;
    this.#claimed -= waiting.length;
    this.#laneEpoch++;
    this.#wakeSlotWaiters();
    await releaseClaims(this.db, waiting).catch((err: unknown) => this.log.error({ err }, 'could not release waiting claims; they go out after their lease'));
  }

  /**
   * Claims held here, less those of stalled lanes (attempts in flight, none finished for STALLED_AFTER_MS): a stalled
   * lane's claims wait on its own receiver, and each lane holds at most #perWebhookLimit, so leaving them out bounds
   * what is held by the number of webhooks while the other webhooks keep being claimed for.
   */
  #claimedByMovingLanes(): number {
    const now = Date.now();
    let stalled = 0;
    for (const lane of this.#lanes.values()) {
      if (lane.running > 0 && now - lane.progressAt > STALLED_AFTER_MS) stalled += lane.running + lane.waiting.length;
    }
    return this.#claimed - stalled;
  }

  /** Puts claimed deliveries in their webhooks' lanes (the claim took no more than each has room for). */
  #accept(claimed: readonly ClaimedDelivery[]): void {
    for (const delivery of claimed) {
      let lane = this.#lanes.get(delivery.webhookId);
      if (!lane) {
        lane = { running: 0, waiting: [], progressAt: Date.now() };
        this.#lanes.set(delivery.webhookId, lane);
      }
      lane.waiting.push(delivery);
      this.#claimed++;
    }
  }

  /**
   * Starts waiting deliveries while slots are free, webhooks taking turns. Beyond the process's bound, a webhook with
   * nothing in flight may still start one attempt (up to `perWebhookConcurrency` such attempts): slow receivers
   * holding every slot (four black holes at 16 each fill 64) cannot keep the other webhooks waiting for their
   * time-outs.
   */
  #pump(): void {
    const { concurrency, perWebhookConcurrency } = this.options;
    while (!this.#stopping && this.#inFlight < concurrency + perWebhookConcurrency) {
      const full = this.#inFlight >= concurrency;
      let started = false;
      for (const [webhookId, lane] of this.#lanes) {
        if (lane.waiting.length === 0 || lane.running >= perWebhookConcurrency || (full && lane.running > 0)) continue;
        this.#start(lane.waiting.shift()!, lane);
        // To the back of the turn order.
        this.#lanes.delete(webhookId);
        this.#lanes.set(webhookId, lane);
        started = true;
        break;
      }
      if (!started) return;
    }
  }

  #start(delivery: ClaimedDelivery, lane: WebhookLane): void {
    if (lane.running === 0) lane.progressAt = Date.now();
    lane.running++;
    this.#inFlight++;
    void this.#attempt(delivery).then((record) => {
      if (record) this.#outcomes.add(record);
      lane.progressAt = Date.now();
      lane.running--;
      this.#inFlight--;
      this.#claimed--;
      if (lane.running === 0 && lane.waiting.length === 0) {
        this.#lanes.delete(delivery.webhookId);
        this.#laneEpoch++;
      } else if (this.#perWebhookLimit - lane.running - lane.waiting.length === this.#perClaim) {
        this.#laneEpoch++; // this lane has just gained room for a claim
      }
      this.#pump();
      this.#wakeSlotWaiters();
    });
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
    while (this.#claimed > 0) {
      if (interrupted()) return;
      await this.#slotFreed();
    }
    await this.#outcomes.settle();
  }

  #slotFreed(): Promise<void> {
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #wakeSlotWaiters(): void {
    const waiters = this.#slotWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
