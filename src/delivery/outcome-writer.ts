import { OutageWarning } from '../db/outage-warning.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { recordAttempts, type AttemptRecord } from '../outbox/claims.js';
import { disableFailingWebhooks } from '../webhooks/auto-disable.js';

// Outcomes are written in batches of up to FLUSH_BATCH, or FLUSH_DELAY_MS after the first of a batch: one statement
// for many attempts (bench/README.md has the measurements). A flush with more waiting writes them FLUSH_BATCH at a
// time: PostgreSQL's cost per outcome no longer falls beyond ~160 (measured: 45–50 µs at 160 and at 256). On PGlite,
// batches of 512 written 40 ms apart (24 November, drains of 100,000 with the deeper claims, 3 interleaved rounds):
// 16,800–18,300/s against 16,850–17,100/s, +0–7%: within what the rounds move, so both databases keep these.
const FLUSH_BATCH = 256;
const FLUSH_DELAY_MS = 20;
// At a deeper claim depth (DeliveryWorker's, while the backlog is deep) both are that many times larger: fewer
// statements, each after more outcomes came (bench/README.md, "Contention").
const RETRY_DELAY_MS = 1_000;

/**
 * Writes attempt outcomes in batches, one write at a time. A write that fails (the database away) keeps its outcomes
 * for the next one, retried after RETRY_DELAY_MS; their claims' leases cover them meanwhile.
 *
 * The write also keeps each webhook's failure streak (see recordAttempts); when it names webhooks whose deliveries
 * have all failed for `autoDisableAfterMs` (read at each write: the settings in force), they are disabled here,
 * which is logged at warn and told to the webhooks subscribed to `webhookDisabled`.
 */
export class OutcomeWriter {
  readonly #outage: OutageWarning;
  #records: AttemptRecord[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #written = 0;
  #depth = 1;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly autoDisableAfterMs: () => number = () => 0,
    private readonly metrics?: Metrics,
  ) {
    this.#outage = new OutageWarning(log, 'could not record delivery outcomes; retrying every second', 'recording delivery outcomes works again');
  }

  /** Outcomes that could not be written (the database away) are waiting for the next try. */
  get holding(): boolean {
    return this.#outage.failing && this.#records.length > 0;
  }

  /** Outcomes written so far. */
  get written(): number {
    return this.#written;
  }

  /** The worker's claim depth: batches of FLUSH_BATCH × depth, written FLUSH_DELAY_MS × depth after their first. */
  set depth(depth: number) {
    this.#depth = depth;
  }

  add(record: AttemptRecord): void {
    this.#records.push(record);
    if (this.#records.length === FLUSH_BATCH * this.#depth) void this.flush();
    else this.#flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS * this.#depth);
  }

  /** Writes the waiting outcomes, one flush at a time. If the database is away they wait for the next flush. */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushing = this.#flushing.then(async () => {
      // What is waiting now, FLUSH_BATCH at a time; outcomes that come meanwhile wait for their own batch.
      for (let left = this.#records.length; left > 0; ) {
        const batch = this.#records.splice(0, Math.min(left, FLUSH_BATCH * this.#depth));
        left -= batch.length;
        if (!(await this.#write(batch))) return;
      }
    });
    return this.#flushing;
  }

  /** Writes one batch; false when that failed (the batch is waiting again, for the retry). */
  async #write(batch: AttemptRecord[]): Promise<boolean> {
    const autoDisableAfterMs = this.autoDisableAfterMs();
    let failingWebhookIds: number[];
    try {
      const startedAt = performance.now();
      ({ failingWebhookIds } = await recordAttempts(this.db, batch, autoDisableAfterMs));
      this.metrics?.outcomesFlushed((performance.now() - startedAt) / 1000);
      this.#written += batch.length;
      this.#outage.worked();
    } catch (err) {
      this.#outage.failed(err, { count: batch.length });
      this.#records.unshift(...batch);
      this.#flushTimer ??= setTimeout(() => void this.flush(), RETRY_DELAY_MS);
      return false;
    }
    if (failingWebhookIds.length > 0) await this.#disable(failingWebhookIds, autoDisableAfterMs);
    return true;
  }

  /**
   * Disables the webhooks the write named. If that fails (the database away), the next delivery of theirs to end
   * failed names them again: their failure streak is in the database, not here.
   */
  async #disable(webhookIds: number[], autoDisableAfterMs: number): Promise<void> {
    try {
      for (const webhook of await disableFailingWebhooks(this.db, webhookIds, autoDisableAfterMs)) {
        this.log.warn(
          // Not its URL: a receiver URL may carry a token in its query, and the id is enough to find it.
          { webhookId: webhook.id, failingSince: webhook.failingSince, reason: webhook.reason },
          'webhook disabled: its deliveries have all failed for autoDisableAfterMs; enable it again once its receiver works',
        );
      }
    } catch (err) {
      this.log.error({ err, webhookIds }, 'could not disable failing webhooks; the next failed delivery tries again');
    }
  }

  /** Writes every waiting outcome, trying a few times; with the database away, what is left is left to the leases. */
  async settle(): Promise<void> {
    for (let tries = 0; tries < 3 && this.#records.length > 0; tries++) await this.flush();
    await this.#flushing;
  }
}
