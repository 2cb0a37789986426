import { Cron } from 'croner';
import type { Logger } from '../logger.js';

/**
 * One recurring task on a CRON pattern that can change at any time. Firings never overlap: a firing that
 * comes while the task still runs is skipped (the running task already does what it would do).
 */
export class RecurringTask {
  #cron: Cron | undefined;
  #pattern = 'none';
  #running: Promise<void> | undefined;

  constructor(
    readonly name: string,
    private readonly task: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  get pattern(): string {
    return this.#pattern;
  }

  /** Whether it fires on its pattern (readiness): `none`, or a timer that is set and has a next run. */
  get armed(): boolean {
    return this.#pattern === 'none' || (this.#cron?.isRunning() ?? false);
  }

  /** Re-arms on `pattern`; `none` stops it. The same pattern again changes nothing. */
  set(pattern: string): void {
    if (pattern === this.#pattern) return;
    this.#cron?.stop();
    this.#cron = undefined;
    this.#pattern = pattern;
    if (pattern !== 'none') this.#cron = new Cron(pattern, () => void this.runNow());
    this.log.info({ task: this.name, pattern }, pattern === 'none' ? 'schedule stopped' : 'schedule armed');
  }

  /** Runs the task now, unless it is running already (then answers when that run ends). */
  runNow(): Promise<void> {
    this.#running ??= this.task()
      .then(() => undefined)
      .catch((err: unknown) => this.log.error({ err, task: this.name }, 'scheduled task failed'))
      .finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stops firing and waits for a run in progress. */
  async stop(): Promise<void> {
    this.set('none');
    await this.#running;
  }
}
