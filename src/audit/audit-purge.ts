/**
 * The audit log is kept `auditRetentionDelayMs` (a setting, a year by default) and removed on the cleanup schedule
 * with old deliveries and runs (delivery/cleanup.ts): it must outlive what it accounts for, so it has a retention of
 * its own rather than the deliveries'.
 */
import type { Queryable } from '../db/database.js';
import { CLEANUP_BATCH } from '../outbox/purge.js';

/**
 * Deletes the entries recorded more than `retentionMs` ago, CLEANUP_BATCH at a time, each batch its own short
 * statement (changes recording entries meanwhile wait on none of it): the oldest first, through the (at, id) index,
 * so a batch reads only what it deletes. Answers how many went.
 */
export async function purgeOldAuditEntries(db: Queryable, retentionMs: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `WITH doomed AS (
         SELECT id FROM audit_log WHERE at < now() - $1 * interval '1 millisecond' ORDER BY at, id LIMIT $2
       )
       DELETE FROM audit_log a USING doomed WHERE a.id = doomed.id`,
      [retentionMs, CLEANUP_BATCH],
    );
    deleted += rowCount;
    if (rowCount < CLEANUP_BATCH) return deleted;
  }
}
