/**
 * "Deliveries are due now": raised in this process after a commit that made deliveries due (events recorded,
 * redeliveries), while `deliveryFrequency` is `immediate`. Whoever listens turns it into a wake-up of the workers:
 * on PostgreSQL one NOTIFY on DELIVERIES_DUE_CHANNEL, heard by every worker process; on PGlite, whose one process
 * holds the database, the worker here directly (see delivery/wake-up.ts).
 *
 * A process-wide signal rather than a parameter, as `onEventsRecorded`: events are recorded from deep in the
 * domain's transactions. Two services in one process (the tests) each hear the other's too: one claim that finds
 * nothing, at worst.
 */
export const DELIVERIES_DUE_CHANNEL = 'alert_webhooks_due';

const listeners = new Set<() => void>();

/** Adds a listener of the signal; answers the function that removes it. */
export function onDeliveriesDue(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Raises the signal; call it only once the change that made deliveries due has committed. */
export function deliveriesDue(): void {
  for (const listener of listeners) listener();
}
