import type { Queryable } from '../db/database.js';
import type { Logger } from '../logger.js';
import { recordAttempts, type AttemptRecord } from '../outbox/claims.js';

// Outcomes are written in batches of up to FLUSH_BATCH, or FLUSH_DELAY_MS after the first of a batch: one statement
// for many attempts (see the measurements in worker.ts).
const FLUSH_BATCH = 512;
const FLUSH_DELAY_MS = 10;
const RETRY_DELAY_MS = 1_000;

/**
 * Writes attempt outcomes in batches, one write at a time. A write that fails (the database away) keeps its outcomes
 * for the next one, retried after RETRY_DELAY_MS; their claims' leases cover them meanwhile.
 */
export class OutcomeWriter {
  #records: AttemptRecord[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #written = 0;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
  ) {}

  /** Outcomes written so far. */
  get written(): number {
    return this.#written;
  }

  add(record: AttemptRecord): void {
    this.#records.push(record);
    if (this.#records.length >= FLUSH_BATCH) void this.flush();
    else this.#flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes the waiting outcomes, one flush at a time. If the database is away they wait for the next flush. */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushing = this.#flushing.then(async () => {
      const batch = this.#records.splice(0);
      if (batch.length === 0) return;
      try {
        await recordAttempts(this.db, batch);
        this.#written += batch.length;
      } catch (err) {
        this.log.error({ err, count: batch.length }, 'could not record delivery outcomes; retrying');
        this.#records.unshift(...batch);
        this.#flushTimer ??= setTimeout(() => void this.flush(), RETRY_DELAY_MS);
      }
    });
    return this.#flushing;
  }

  /** Writes every waiting outcome, trying a few times; with the database away, what is left is left to the leases. */
  async settle(): Promise<void> {
    for (let tries = 0; tries < 3 && this.#records.length > 0; tries++) await this.flush();
    await this.#flushing;
  }
}
