/**
 * The lease of an alert run: a claim (alert-run-store.ts, claimDueAlert and claimAlert) holds the alert for RUN_LEASE_MS,
 * and the process running it renews that lease every third of it for as long as the run lives, as a delivery worker
 * renews the claims it holds (delivery/worker.ts). A process killed mid-run renews nothing: its run is claimed again
 * by another process (or the same one, restarted) once the lease ends, within RUN_LEASE_MS of the kill. Before, the
 * lease covered the run's whole time-out and a margin (12 minutes with the defaults), which a killed run waited out.
 *
 * A renewal never makes a run record twice: the run's transaction checks, under the alert's row lock, that the claim
 * is still this process's (run_owner) before it writes. While that transaction holds the row, another process cannot
 * claim the alert (the claims skip or wait for a locked row), whatever the lease says.
 */
import type { Logger } from '../logger.js';

/** How long a claim holds without renewal: what a killed run waits before another process does it again. */
export const RUN_LEASE_MS = 30_000;

export interface HeldLease {
  /** Stops renewing; resolves once a renewal under way has ended. */
  stop(): Promise<void>;
}

/**
 * Calls `renewLease` (the store's statement for alert `alertId`, alert-run-store.ts) every third of `leaseMs` until
 * stopped. One renewal at a time: one that waits (the run's own transaction holds the alert's row; the embedded
 * database's one session is busy) is not joined by another. A renewal that fails (the database away) is logged; the
 * next one tries again.
 */
export function holdLease(renewLease: () => Promise<void>, alertId: number, leaseMs: number, logger: Logger): HeldLease {
  let renewing: Promise<void> | undefined;
  const renew = () => {
    if (renewing) return;
    renewing = renewLease()
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err, alertId }, 'could not renew the lease of an alert run; past it another process may run the alert again (this run then records nothing)'),
      )
      .finally(() => (renewing = undefined));
  };
  const timer = setInterval(renew, Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await renewing;
    },
  };
}
