import type { Queryable } from '../db/database.js';

export const CLEANUP_BATCH = 5_000;

/**
 * Deletes the deliveries in `status` that finished more than `retentionMs` ago, then the payloads no delivery refers
 * to any more, CLEANUP_BATCH at a time (see cleanupDeliveries for why). Answers how many deliveries went.
 */
export async function purgeFinishedDeliveries(db: Queryable, status: 'sent' | 'failed', retentionMs: number): Promise<number> {
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

/**
 * Deletes a webhook's deliveries and the payloads no other delivery refers to; call it in the transaction that
 * deletes the webhook (the delivery table has no foreign keys to cascade).
 */
export async function purgeWebhookDeliveries(tx: Queryable, webhookId: number): Promise<void> {
  const { rows } = await tx.query<{ event_id: number }>('DELETE FROM webhook_deliveries WHERE webhook_id = $1 RETURNING event_id', [webhookId]);
  await deleteUnreferencedEvents(tx, rows.map((r) => r.event_id));
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
