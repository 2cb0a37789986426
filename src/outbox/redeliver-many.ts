import type { Database } from '../db/database.js';

/** Which failed deliveries to make pending again: all of them, or narrowed by webhook and by when they failed. */
export interface RedeliverFilter {
  /** Only deliveries of these webhooks (undefined: every webhook). */
  webhookIds?: readonly number[] | undefined;
  /** Only deliveries that ended failed at or after this instant (`finished_at`). */
  since?: Date | undefined;
  /** …and before this instant. */
  until?: Date | undefined;
}

/**
 * Rows per statement. Each batch is a transaction of its own, so a million failed deliveries never hold one
 * transaction (and its row locks) for minutes while workers claim and record around it.
 */
export const REDELIVER_BATCH_SIZE = 5000;

/**
 * Makes every failed delivery matching `filter` pending and due now, as `redeliver` (claims.ts) does for one:
 * attempts from 0, the retry schedule afresh, the attempt log kept, the lease token moved on (it fences off an
 * outcome of an older claim). In batches of REDELIVER_BATCH_SIZE until none is left; answers how many.
 *
 * Bounded and idempotent: only rows last changed before the call started are taken, so a delivery that fails again
 * while the call runs (a receiver still down, a schedule of no retries) is not taken twice, and the loop ends.
 * FOR UPDATE SKIP LOCKED passes over rows another transaction holds (a cleanup deleting them): safe while workers run.
 * The batches go through `webhook_deliveries_failed` (finished_at WHERE failed).
 */
export async function redeliverFailed(db: Database, filter: RedeliverFilter = {}): Promise<number> {
  const { rows } = await db.query<{ now: Date }>('SELECT now() AS now');
  const startedAt = rows[0]!.now;
  const params = [filter.webhookIds ?? null, filter.since ?? null, filter.until ?? null, startedAt, REDELIVER_BATCH_SIZE];
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, lease_token = lease_token + 1, next_attempt_at = now(),
         locked_until = NULL, finished_at = NULL, updated_at = now()
       WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'failed'
           AND ($1::int[] IS NULL OR webhook_id = ANY($1::int[]))
           AND ($2::timestamptz IS NULL OR finished_at >= $2)
           AND ($3::timestamptz IS NULL OR finished_at < $3)
           AND updated_at < $4
         LIMIT $5
         FOR UPDATE SKIP LOCKED
       )`,
      params,
    );
    total += rowCount;
    if (rowCount < REDELIVER_BATCH_SIZE) return total;
  }
}
