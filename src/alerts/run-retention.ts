/**
 * Run history is kept like deliveries: runs older than `alertRunRetentionDelayMs` (a setting) are removed on the
 * cleanup schedule (delivery/cleanup.ts), but the newest ALERT_RUNS_KEPT runs of each alert are kept whatever their
 * age, so an alert that runs rarely, or one not run since, still shows what its last runs did.
 */
import type { Queryable } from '../db/database.js';
import { CLEANUP_BATCH } from '../outbox/purge.js';

/** The newest runs of each alert always kept: ten times the runs an alert's answer shows (MAX_RUNS_SHOWN). */
export const ALERT_RUNS_KEPT = 100;

/**
 * Deletes the runs started more than `retentionMs` ago that are not among the newest `kept` of their alert,
 * CLEANUP_BATCH at a time. Each alert's newest runs are found by one probe of its (alert_id, id DESC) index: the
 * (kept + 1)-th newest run's id is where its removable runs start, and below it the index gives them in order.
 */
export async function purgeOldAlertRuns(db: Queryable, retentionMs: number, kept = ALERT_RUNS_KEPT): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `WITH boundary AS (
         SELECT a.id AS alert_id, (SELECT r.id FROM alert_runs r WHERE r.alert_id = a.id ORDER BY r.id DESC OFFSET $2 LIMIT 1) AS newest_removable
         FROM alerts a
       ), doomed AS (
         SELECT r.id FROM boundary b JOIN alert_runs r ON r.alert_id = b.alert_id AND r.id <= b.newest_removable
         WHERE r.started_at < now() - $1 * interval '1 millisecond'
         LIMIT $3
       )
       DELETE FROM alert_runs r USING doomed WHERE r.id = doomed.id`,
      [retentionMs, kept, CLEANUP_BATCH],
    );
    deleted += rowCount;
    if (rowCount < CLEANUP_BATCH) return deleted;
  }
}
