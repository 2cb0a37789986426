import type { WebhookSettings } from '../config/webhook-settings.js';
import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database, Queryable } from '../db/database.js';
import { deleteUnreferencedEvents } from '../webhooks/deliveries.js';

const CLEANUP_LOCK_KEY = AdvisoryLock.cleanup;
export const CLEANUP_BATCH = 5_000;

export interface CleanupResult {
  /** False when another process held the lock, so this one did nothing. */
  ran: boolean;
  sent: number;
  failed: number;
}

/**
 * Removes `sent` deliveries older than deliveryRetentionDelayMs (from their sentDate) and `failed` ones older
 * than failedDeliveryRetentionDelayMs (from their last attempt), then the event payloads no delivery refers to.
 * In batches, each its own short statement, so deliveries keep flowing meanwhile; under an advisory lock, so one
 * process at a time runs it. (The embedded database serves one process and one connection: no lock there, and
 * no connection held between batches.)
 */
export async function cleanupDeliveries(db: Database, settings: Pick<WebhookSettings, 'deliveryRetentionDelayMs' | 'failedDeliveryRetentionDelayMs'>): Promise<CleanupResult> {
  const run = async (conn: Queryable): Promise<CleanupResult> => ({
    ran: true,
    sent: await deleteFinished(conn, 'sent', settings.deliveryRetentionDelayMs),
    failed: await deleteFinished(conn, 'failed', settings.failedDeliveryRetentionDelayMs),
  });
  if (db.kind === 'pglite') return run(db);
  return db.withConnection(async (conn) => {
    const { rows } = await conn.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [CLEANUP_LOCK_KEY]);
    if (!rows[0]?.locked) return { ran: false, sent: 0, failed: 0 };
    try {
      return await run(conn);
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [CLEANUP_LOCK_KEY]);
    }
  });
}

async function deleteFinished(db: Queryable, status: 'sent' | 'failed', retentionMs: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await db.query<{ event_id: number }>(
      // No row locks first: one process at a time cleans up, and a redeliver racing a batch is re-checked by the
    // DELETE itself (a row no longer sent or failed is left alone).
    `WITH doomed AS (
         SELECT id FROM webhook_deliveries
         WHERE status = $1 AND finished_at < now() - $2 * interval '1 millisecond'
         LIMIT $3
       )
       DELETE FROM webhook_deliveries d USING doomed
       WHERE d.id = doomed.id AND d.status = $1 RETURNING d.event_id`,
      [status, retentionMs, CLEANUP_BATCH],
    );
    await deleteUnreferencedEvents(db, rows.map((r) => r.event_id));
    deleted += rows.length;
    if (rows.length < CLEANUP_BATCH) return deleted;
  }
}
