/**
 * A run asked for by hand (POST /api/admin/:sourceKey/alerts/:alertId/run): run now and answer once it is recorded,
 * or marked for the schedule (`run_requested_at`), which claims it as a manual run (alert-run-store.ts) as soon as
 * this process's scheduler is told, or another process's next tick.
 */
import { recordAudit } from '../audit/audit-log.js';
import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { runClaimedAlert, type RunDependencies } from './alert-run.js';
import { claimAlert } from './alert-run-store.js';
import { alertQueries, findAlert } from './alerts.js';

export interface RunAsked {
  sourceKey: string;
  alertId: number;
  /** Answer when the run is recorded, rather than as soon as it is asked for. */
  waitForRun: boolean;
}

/**
 * Asks for a run of the alert; `alreadyRunning` when a run of it holds its lease (the run asked for is then that one,
 * or, left for the schedule, the next). `kick` tells this process's scheduler, when it runs one, not to wait its tick.
 */
export async function askForRun(run: RunDependencies, kick: (() => void) | undefined, principal: Principal, asked: RunAsked): Promise<{ alreadyRunning: boolean }> {
  const { db, limits } = run;
  const { sourceKey, alertId } = asked;
  await findAlert(db, sourceKey, alertId);
  if ((await alertQueries(db, alertId)).length === 0) throw new AppError('invalid_alert_query', `alert ${alertId} has no queries to run: its matches are reported with POST …/matches`, undefined, 'queries');
  // Who asked for the run is audited with the ask (the claim, or the request left for the schedule); what the run
  // finds is the service's own work, in the run's history, not the audit log.
  const audited = { action: 'alert.run', targetType: 'alert', targetId: alertId, sourceKey } as const;
  if (asked.waitForRun) {
    const claimed = await db.transaction(async (tx) => {
      const claim = await claimAlert(tx, run.owner, alertId, limits);
      if (claim) await recordAudit(tx, principal, { ...audited, after: { waitForRun: true } });
      return claim;
    });
    if (!claimed) return { alreadyRunning: true };
    await runClaimedAlert(run, claimed);
    return { alreadyRunning: false };
  }
  const rows = await db.transaction(async (tx) => {
    const marked = await markRunRequested(tx, alertId);
    if (marked.length) await recordAudit(tx, principal, { ...audited, after: { waitForRun: false } });
    return marked;
  });
  kick?.();
  return { alreadyRunning: rows[0]?.running ?? false };
}

/** Marks the alert's run asked for (an earlier ask keeps its time): a row, saying whether a run holds its lease, unless the alert is gone. */
async function markRunRequested(tx: Queryable, alertId: number): Promise<{ running: boolean }[]> {
  const { rows } = await tx.query<{ running: boolean }>(
    `UPDATE alerts SET run_requested_at = COALESCE(run_requested_at, now()) WHERE id = $1
           RETURNING COALESCE(run_locked_until > now(), false) AS running`,
    [alertId],
  );
  return rows;
}
