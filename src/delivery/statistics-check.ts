import { describeDbError } from '../db/db-errors.js';
import type { Logger } from '../logger.js';
import { MAX_CLAIM } from './claim-depth.js';

// A drain checks the queue's statistics (analyzeQueueIfStale) once it has claimed a full claim's worth, beside the
// claims and never before one: a check at the start of every drain was most of a delivery's latency under
// `immediate` (bench/README.md).
export const STATISTICS_CHECK_AFTER = MAX_CLAIM;

/** ANALYZE of the delivery queue when its statistics lag its backlog: at most once a drain, one at a time, never awaited. */
export class StatisticsCheck {
  #running: Promise<void> | undefined;

  constructor(
    /** analyzeQueueIfStale, on the worker's database. */
    private readonly analyzeIfStale: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  /** The check in progress, if any: a stopping worker waits for it. */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /** One drain's trigger, told how many that drain has claimed so far: it starts the check once, at STATISTICS_CHECK_AFTER. */
  forDrain(): (claimed: number) => void {
    let checked = false;
    return (claimed) => {
      if (checked || claimed < STATISTICS_CHECK_AFTER) return;
      checked = true;
      this.#start();
    };
  }

  #start(): void {
    if (this.#running) return;
    this.#running = this.analyzeIfStale()
      .then(
        () => undefined,
        // The claims go on with the plans they have; the next large drain checks again.
        (err: unknown) => this.log.warn({ error: describeDbError(err) }, 'could not check the delivery queue statistics'),
      )
      .finally(() => (this.#running = undefined));
  }
}
