import { OutageWarning } from '../db/outage-warning.js';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Keyring } from '../secrets/keyring.js';
import { analyzeQueueIfStale, claimDueDeliveries, recordAttempts, releaseClaims, renewLeases, type AttemptRecord, type ClaimedDelivery } from '../outbox/claims.js';
import { attemptDelivery } from './attempt.js';
import { BacklogDepth, CLAIM_DEPTH, claimSize, type ClaimDepth, type ClaimSize } from './claim-depth.js';
import { FailureLog } from './failure-log.js';
import { EndpointCache } from './endpoints.js';
import { writeHeldOutcomes } from './held-outcomes.js';
import { Lanes } from './lanes.js';
import { HeldLeases, leaseMsFor, renewAfterMsFor, type LeaseTerms } from './leases.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { DeliverySender } from './sender.js';
import { StatisticsCheck } from './statistics-check.js';
import { HeldBackWebhooks, unsignedPing } from './unreadable-secrets.js';

export interface WorkerOptions {
  /** Attempts in flight in this process (a webhook with none in flight may still start one: see Lanes.startNext). */
  concurrency: number;
  /** Attempts in flight to one webhook in this process: one slow receiver cannot take every slot. */
  perWebhookConcurrency: number;
  /** Overrides the lease computed from the time-out (tests). */
  leaseMs?: number | undefined;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 64, perWebhookConcurrency: 16 };

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
 * outcomes are written by an OutcomeWriter (outcome-writer.ts); this class holds the claim loop and its modes. Its
 * policies live beside it: how much to claim and how deep (claim-depth.ts), the leases of what is held (leases.ts),
 * webhooks whose secrets this process cannot open (unreadable-secrets.ts), outcomes held through an outage
 * (held-outcomes.ts) and the queue's statistics (statistics-check.ts). A disabled webhook's deliveries are never
 * claimed (the claim walks enabled webhooks only), and a webhook changed by any process is read again with the first
 * claim after the change (EndpointCache).
 */
export class DeliveryWorker {
  #mode: WorkerMode = 'idle';
  readonly #lanes: Lanes<ClaimedDelivery>;
  #slotWaiters: (() => void)[] = [];
  readonly #outcomes: OutcomeWriter;
  readonly #failures: FailureLog;
  readonly #endpoints: EndpointCache;
  readonly #heldBack: HeldBackWebhooks;
  readonly #leases: HeldLeases<ClaimedDelivery>;
  readonly #backlog: BacklogDepth;
  readonly #statistics: StatisticsCheck;
  #draining: Promise<number> | undefined;
  // A firing came while the drain claimed or waited: claim again at once, for the webhooks with room. Waiting only for
  // a lane to gain room, one receiver that never answered held every other webhook's new deliveries until its
  // attempts timed out.
  #firedMeanwhile = false;
  #stopped: Promise<void> | undefined;
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
    this.#heldBack = new HeldBackWebhooks(log);
    this.#leases = new HeldLeases((due, leaseMs) => renewLeases(db, due, leaseMs), () => this.#leaseTerms, log);
    this.#statistics = new StatisticsCheck(() => analyzeQueueIfStale(db), log);
    // A failed drain is told once per outage: a firing a second would repeat it.
    this.#drainOutage = new OutageWarning(log, 'delivery drain failed; each firing tries again', 'delivery drains work again');
    const depth = this.#base;
    this.#backlog = new BacklogDepth(depth.maxDepth);
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

  /** How far ahead a worker claims at depth 1 (see BacklogDepth for the depth). */
  get #base(): ClaimDepth {
    return CLAIM_DEPTH[this.db.kind];
  }

  /** How long a claim is held (see leaseMsFor), at the time-out in force. */
  get leaseMs(): number {
    if (this.options.leaseMs !== undefined) return this.options.leaseMs;
    return leaseMsFor(this.settings.webhooks.requestTimeoutMs, this.#base.ahead);
  }

  get #leaseTerms(): LeaseTerms {
    const leaseMs = this.leaseMs;
    return { leaseMs, renewAfterMs: renewAfterMsFor(leaseMs, this.settings.webhooks.requestTimeoutMs) };
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
    const checkStatistics = this.#statistics.forDrain();
    while (this.#mayClaim) {
      this.#firedMeanwhile = false;
      const size = claimSize(this.options, this.#base, lanes.depth, lanes.claimedByMovingLanes());
      if (size.limit < size.claimAt && lanes.claimed > 0) {
        await this.#slotFreed();
        continue;
      }
      await writeHeldOutcomes(this.#outcomes);
      const writtenBefore = this.#outcomes.written;
      const claimedAt = Date.now();
      const claimed = await this.#claim(size);
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
      const signable = await this.#holdBackUnreadable(claimed);
      if (!this.#mayClaim) {
        // stop() or pause() came while this claim was on its way: give it back rather than attempt it after.
        await releaseClaims(this.db, signable).catch((err: unknown) => this.log.error({ err }, 'could not release claims; they go out after their lease'));
        break;
      }
      if (signable.length === 0) continue;
      attempted += signable.length;
      this.#leases.hold(signable, claimedAt);
      lanes.accept(signable);
      this.#startWaiting();
      checkStatistics(attempted);
    }
    return attempted;
  }

  /** One claim, for the webhooks with room in their lane and not held back; the claim depth follows what it found. */
  async #claim(size: ClaimSize): Promise<ClaimedDelivery[]> {
    const lanes = this.#lanes;
    const startedAt = performance.now();
    const excluded = [...lanes.withoutRoom(), ...this.#heldBack.ids()];
    const claimed = await claimDueDeliveries(this.db, { limit: size.limit, leaseMs: this.leaseMs, excludedWebhookIds: excluded, perWebhook: size.perWebhook, turnAfter: lanes.turnAfter });
    this.metrics?.claimed((performance.now() - startedAt) / 1000);
    const depth = this.#backlog.afterClaim({ claimed, limit: size.limit, perWebhook: size.perWebhook, someExcluded: excluded.length > 0 }, lanes.depth, lanes.finishedCount);
    if (depth !== undefined) {
      lanes.depth = depth;
      this.#outcomes.depth = depth;
    }
    return claimed;
  }

  /**
   * Loads the claim's endpoints (those whose webhook changed since they were loaded are read again) and gives back
   * at once the deliveries of webhooks whose secrets this process cannot open (see HeldBackWebhooks); answers the rest.
   */
  async #holdBackUnreadable(claimed: ClaimedDelivery[]): Promise<ClaimedDelivery[]> {
    const unreadable = await this.#endpoints.load(claimed);
    const { send, giveBack } = this.#heldBack.sort(claimed, unreadable);
    if (giveBack.length > 0) await releaseClaims(this.db, giveBack);
    return send;
  }

  /**
   * One attempt at once, outside the schedule (ping): answers when its outcome is written. The endpoint is read
   * afresh: an admin pinging after changing the URL or the secret checks the new ones.
   */
  async attemptNow(delivery: ClaimedDelivery): Promise<void> {
    const unreadable = await this.#endpoints.reload([delivery.webhookId]);
    const reason = unreadable.get(delivery.webhookId);
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
    await this.#statistics.running;
    this.#enter('stopped');
  }

  /** Gives back the claims not started yet: due at once, their attempt uncounted. */
  async #giveBackWaiting(): Promise<void> {
    const waiting = this.#lanes.takeWaiting();
    if (waiting.length === 0) return;
    for (const d of waiting) this.#leases.letGo(d);
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
        this.#leases.letGo(delivery);
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
    this.#leases.forget(); // nothing is held
    await this.#outcomes.settle();
  }

  #slotFreed(): Promise<void> {
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #wakeSlotWaiters(): void {
    // Checked whenever an attempt ends: at least once per time-out while anything is in flight, and so held.
    this.#leases.renewDue();
    if (this.#slotWaiters.length === 0) return;
    const waiters = this.#slotWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
