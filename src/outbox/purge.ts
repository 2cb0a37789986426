import type { Queryable } from '../db/database.js';
import { deleteWebhookCounts } from './attempt-counts.js';

export const CLEANUP_BATCH = 5_000;

/**
 * Deletes the deliveries in `status` that finished more than `retentionMs` ago, then the payloads no delivery refers
 * to any more, CLEANUP_BATCH at a time (see cleanupDeliveries for why). Answers how many deliveries went.
 *
 * Failed deliveries are found through their own index (webhook_deliveries_failed). Sent ones have none: an index
 * of them cost every delivery's outcome an index entry (migration 0007 has the figures), so the cleanup walks the
 * primary key instead, CLEANUP_BATCH rows a statement, deleting those past retention. It reads the kept rows too,
 * once a run, which the daily cleanup pays instead of every delivery. Measured on PostgreSQL 15 here, 300,000 sent
 * rows past retention among 400,000: 21–22 s through the old (status, finished_at) index, 10–10.5 s walking.
 */
export async function purgeFinishedDeliveries(db: Queryable, status: 'sent' | 'failed', retentionMs: number): Promise<number> {
  return status === 'failed' ? purgeFailed(db, retentionMs) : purgeSent(db, retentionMs);
}

async function purgeFailed(db: Queryable, retentionMs: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await db.query<{ event_id: number }>(
      // No row locks first: one process at a time cleans up, and a redeliver racing a batch is re-checked by the
      // DELETE itself (a row no longer failed is left alone).
      `WITH doomed AS (
         SELECT id FROM webhook_deliveries
         WHERE status = 'failed' AND finished_at < now() - $1 * interval '1 millisecond'
         LIMIT $2
       )
       DELETE FROM webhook_deliveries d USING doomed
       WHERE d.id = doomed.id AND d.status = 'failed' RETURNING d.event_id`,
      [retentionMs, CLEANUP_BATCH],
    );
    await deleteUnreferencedEvents(db, rows.map((r) => r.event_id));
    deleted += rows.length;
    if (rows.length < CLEANUP_BATCH) return deleted;
  }
}

async function purgeSent(db: Queryable, retentionMs: number): Promise<number> {
  let deleted = 0;
  let after = 0;
  for (;;) {
    const { rows } = await db.query<{ walked: number; last: number | null; eventIds: number[] }>(
      // The DELETE checks the row again: one redelivered meanwhile (pending again) is left alone.
      `WITH walked AS MATERIALIZED (
         SELECT id, status, finished_at FROM webhook_deliveries WHERE id > $1 ORDER BY id LIMIT $3
       ), gone AS (
         DELETE FROM webhook_deliveries d USING walked w
         WHERE d.id = w.id AND w.status = 'sent' AND w.finished_at < now() - $2 * interval '1 millisecond'
           AND d.status = 'sent' AND d.finished_at < now() - $2 * interval '1 millisecond'
         RETURNING d.event_id
       )
       SELECT (SELECT count(*) FROM walked)::int AS walked, (SELECT max(id) FROM walked) AS last, ARRAY(SELECT event_id FROM gone) AS "eventIds"`,
      [after, retentionMs, CLEANUP_BATCH],
    );
    const { walked, last, eventIds } = rows[0]!;
    await deleteUnreferencedEvents(db, eventIds.map(Number));
    deleted += eventIds.length;
    if (walked < CLEANUP_BATCH || last === null) return deleted;
    after = Number(last);
  }
}

/**
 * Deletes a webhook's deliveries, the payloads no other delivery refers to and its attempt counts; call it in the transaction that
 * deletes the webhook (the delivery table has no foreign keys to cascade).
 */
export async function purgeWebhookDeliveries(tx: Queryable, webhookId: number): Promise<void> {
  const { rows } = await tx.query<{ event_id: number }>('DELETE FROM webhook_deliveries WHERE webhook_id = $1 RETURNING event_id', [webhookId]);
  await deleteUnreferencedEvents(tx, rows.map((r) => r.event_id));
  await deleteWebhookCounts(tx, webhookId);
}

/**
 * Deletes those of `eventIds` that no delivery refers to any more. Run it after deleting deliveries, as its
 * own statement: inside the deleting statement the deleted rows would still be visible to this check.
 */
async function deleteUnreferencedEvents(db: Queryable, eventIds: readonly number[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.query(
    `DELETE FROM webhook_events e WHERE e.id = ANY($1::bigint[])
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
    [[...new Set(eventIds)]],
  );
}
