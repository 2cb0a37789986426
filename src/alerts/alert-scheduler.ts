/**
 * Runs the alerts that are due, on every process that runs the workers: each tick claims one due alert at a time
 * (alert-run-store.ts, a lease in the database, so any number of processes share the runs and each due time is run
 * once) until none is left. One run at a time per process: a graph engine is the bottleneck of a run, not this.
 */
import type { Logger } from '../logger.js';
import { runClaimedAlert, type RunDependencies } from './alert-run.js';
import { claimDueAlert } from './alert-run-store.js';

// How often a process looks for due alerts: a CRON's finest grain is a second.
const TICK_MS = 1_000;

export class AlertScheduler {
  readonly #deps: RunDependencies;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #again = false;
  // Logged once until runs can be claimed again (a database away must not flood the log).
  #failing = false;

  constructor(deps: RunDependencies) {
    this.#deps = deps;
    this.#logger = deps.logger;
  }

  start(): void {
    this.#timer = setInterval(() => this.kick(), TICK_MS);
    this.#timer.unref();
    this.kick();
  }

  /** Looks for due alerts now (a manual run was asked for). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.kick();
      }
    });
  }

  async #drain(): Promise<void> {
    const { db, graphs, owner, limits } = this.#deps;
    try {
      const embedded = await graphs.servableEmbedded(db);
      for (;;) {
        if (this.#stopped) return;
        const alert = await claimDueAlert(db, owner, embedded, limits);
        if (!alert) break;
        await runClaimedAlert(this.#deps, alert);
      }
      if (this.#failing) this.#logger.info('alert runs: claiming works again');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#logger.warn({ err }, 'alert runs: could not claim or record a run; trying again every second');
      this.#failing = true;
    }
  }

  /** Stops claiming; a run under way finishes (or is left to its lease if the process is killed). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }
}
