import type { Logger } from '../logger.js';
import { describeDbError } from './db-errors.js';

/**
 * Warns once when a repeated piece of work starts failing (the database away), and, if given a line for it, says so
 * when it works again: a retry every second must not repeat the warning for the whole outage. The error is logged as
 * a line (describeDbError), never as the object, whose connection details may hold the database URL.
 */
export class OutageWarning {
  #failing = false;

  constructor(
    private readonly log: Logger,
    /** What failing means and what happens meanwhile, e.g. 'cannot read the settings; keeping the last known ones'. */
    private readonly warning: string,
    /** Said once when the work succeeds after a failure; none: recovery goes unsaid. */
    private readonly recovered?: string,
  ) {}

  get failing(): boolean {
    return this.#failing;
  }

  failed(err: unknown, fields: Record<string, unknown> = {}): void {
    if (!this.#failing) this.log.warn({ error: describeDbError(err), ...fields }, this.warning);
    this.#failing = true;
  }

  worked(): void {
    if (this.#failing && this.recovered !== undefined) this.log.info(this.recovered);
    this.#failing = false;
  }
}
