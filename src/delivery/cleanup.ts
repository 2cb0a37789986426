import type { WebhookSettings } from '../settings/webhook-settings.js';
import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database, Queryable } from '../db/database.js';
import { purgeFinishedDeliveries } from '../outbox/purge.js';
import { purgeOldAlertRuns } from '../alerts/run-retention.js';
import { purgeOldAuditEntries } from '../audit/audit-purge.js';

const CLEANUP_LOCK_KEY = AdvisoryLock.cleanup;

export interface CleanupResult {
  /** False when another process held the lock, so this one did nothing. */
  ran: boolean;
  sent: number;
  failed: number;
  /** Alert runs removed (alerts/run-retention.ts). */
  runs: number;
  /** Audit log entries removed (audit/audit-purge.ts). */
  audit: number;
}

/**
 * Removes `sent` deliveries older than deliveryRetentionDelayMs (from their sentDate) and `failed` ones older
 * than failedDeliveryRetentionDelayMs (from their last attempt), then the event payloads no delivery refers to;
 * alert runs older than alertRunRetentionDelayMs, but the newest of each alert (alerts/run-retention.ts); and audit
 * log entries older than auditRetentionDelayMs (audit/audit-purge.ts).
 * In batches, each its own short statement, so deliveries keep flowing meanwhile; under an advisory lock, so one
 * process at a time runs it. (The embedded database serves one process and one connection: no lock there, and
 * no connection held between batches.)
 */
export async function cleanupDeliveries(db: Database, settings: Pick<WebhookSettings, 'deliveryRetentionDelayMs' | 'failedDeliveryRetentionDelayMs' | 'alertRunRetentionDelayMs' | 'auditRetentionDelayMs'>): Promise<CleanupResult> {
  const run = async (conn: Queryable): Promise<CleanupResult> => ({
    ran: true,
    sent: await purgeFinishedDeliveries(conn, 'sent', settings.deliveryRetentionDelayMs),
    failed: await purgeFinishedDeliveries(conn, 'failed', settings.failedDeliveryRetentionDelayMs),
    runs: await purgeOldAlertRuns(conn, settings.alertRunRetentionDelayMs),
    audit: await purgeOldAuditEntries(conn, settings.auditRetentionDelayMs),
  });
  if (db.kind === 'pglite') return run(db);
  return db.withConnection(async (conn) => {
    const { rows } = await conn.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [CLEANUP_LOCK_KEY]);
    if (!rows[0]?.locked) return { ran: false, sent: 0, failed: 0, runs: 0, audit: 0 };
    try {
      return await run(conn);
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [CLEANUP_LOCK_KEY]);
    }
  });
}
