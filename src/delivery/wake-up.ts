import type { Database } from '../db/database.js';
import { OutageWarning } from '../db/outage-warning.js';
import type { Logger } from '../logger.js';
import { DELIVERIES_DUE_CHANNEL, deliveriesDue, onDeliveriesDue } from '../outbox/due-signal.js';
import type { DeliveryFrequency } from '../settings/webhook-settings.js';

/**
 * `deliveryFrequency: immediate` on a worker: calls `wake` whenever a commit made deliveries due, in any process,
 * and when such a commit may have gone unheard. On PostgreSQL a LISTEN (the database's one listening connection,
 * see postgres-listener.ts): a NOTIFY from any process, and the connection's return after a loss (the NOTIFYs sent
 * meanwhile reached nobody). On PGlite the in-process signal (outbox/due-signal.ts): one process holds the
 * database, so every commit is this process's own. Answers once listening, with the function that stops it.
 */
export async function listenForDueDeliveries(db: Database, wake: () => void): Promise<() => Promise<void>> {
  if (db.kind === 'postgres') return db.listen(DELIVERIES_DUE_CHANNEL, wake, wake);
  const stop = onDeliveriesDue(wake);
  return async () => void stop();
}

// One statement, its own transaction, committed without waiting for the WAL flush: a NOTIFY holds a lock that
// serialises every notifying commit, through the flush when it waits for one. Nothing is lost if it is: the sweep.
const NOTIFY_SQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`;

/**
 * On PostgreSQL, in every process that records events (ROLE=api too): turns this process's "deliveries are due"
 * signal into a NOTIFY every worker process hears. Coalesced: one NOTIFY in flight at a time, and the signals raised
 * meanwhile make one more after it, so a thousand commits a second cost a few hundred NOTIFYs and never a queue.
 */
export class DueAnnouncer {
  readonly #stopListening: () => void;
  #sending: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  readonly #outage: OutageWarning;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
  ) {
    this.#outage = new OutageWarning(log, 'could not tell the workers that deliveries are due; they find them within a second');
    this.#stopListening = onDeliveriesDue(() => this.announce());
  }

  /** Tells every worker process that deliveries are due now (the change that made them due has committed). */
  announce(): void {
    if (this.#stopped) return;
    if (this.#sending) {
      this.#again = true;
      return;
    }
    this.#sending = this.#send().finally(() => (this.#sending = undefined));
  }

  /** Stops announcing; answers once the NOTIFY in flight, if any, is sent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopListening();
    await this.#sending;
  }

  async #send(): Promise<void> {
    do {
      this.#again = false;
      try {
        await this.db.query(NOTIFY_SQL, [DELIVERIES_DUE_CHANNEL]);
        this.#outage.worked();
      } catch (err) {
        // The workers' sweep finds what this did not announce.
        this.#outage.failed(err);
        return;
      }
    } while (this.#again && !this.#stopped);
  }
}

/** After a commit made deliveries due outside the outbox's own recording (a redelivery): wakes the workers. */
export function wakeWorkersIfImmediate(deliveryFrequency: DeliveryFrequency): void {
  if (deliveryFrequency === 'immediate') deliveriesDue();
}
