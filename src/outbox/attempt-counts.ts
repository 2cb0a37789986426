/**
 * Attempt outcomes counted per minute and per hour (table delivery_attempt_counts, migration 0011): what the health
 * over time is drawn from. Written by the statement that records outcomes, so a count exists exactly when its outcome
 * committed; read by health-over-time.ts.
 */
import type { Queryable } from '../db/database.js';

/**
 * Upper bounds of the duration classes, in milliseconds: class 0 holds attempts under 1 ms, class i those from
 * bound i-1 up to bound i, the last class those of 60 s and more. About ×1.5 apart, so a p95 read from the classes
 * is within a class's width of the true one (and interpolated inside it).
 */
export const DURATION_BOUNDS_MS = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10000, 15000, 20000, 30000, 45000,
  60000,
] as const;
export const DURATION_CLASSES = DURATION_BOUNDS_MS.length + 1;

/** Ring sizes (see the migration): two hours of minutes, eight days of hours. */
export const MINUTE_SLOTS = 120;
export const HOUR_SLOTS = 192;

const classes = Array.from({ length: DURATION_CLASSES }, (_, i) => i);

/**
 * The write hook: a data-modifying CTE for the outcome statement (src/outbox/claims.ts, RECORD_ATTEMPTS_SQL), which
 * reads its `recorded` CTE: the outcomes that applied, with `webhook_id`, `status` (the delivery's new one), `is_ping`
 * and `duration_ms`. Pings are an admin's probe, not traffic, and are left out (as from the failure streak).
 *
 * The outcomes are counted at the minute and hour the statement runs (the database's clock), not at each attempt's
 * own time: an outcome is written within tens of milliseconds of its attempt's end (later only after a database
 * outage), and one bucket per span and statement means one row per webhook and span, so no two rows of the insert
 * can land on the same slot. Per webhook and for all together (GROUP BY ROLLUP: the total row's webhook_id is NULL,
 * stored as 0), in key order, so concurrent writers lock the rows they share in the same order.
 */
export const COUNT_ATTEMPTS_CTE = `counted AS (
       INSERT INTO delivery_attempt_counts AS c (webhook_id, span, slot, bucket, sent, failed, retried, durations)
       SELECT coalesce(o.webhook_id, 0), s.span, s.slot, s.bucket, o.sent, o.failed, o.retried, o.durations
       FROM (
         SELECT r.webhook_id, count(*) FILTER (WHERE r.status = 'sent')::int AS sent, count(*) FILTER (WHERE r.status = 'failed')::int AS failed,
                count(*) FILTER (WHERE r.status = 'pending')::int AS retried,
                ARRAY[${classes.map((i) => `count(*) FILTER (WHERE r.class = ${i})::int`).join(', ')}] AS durations
         FROM (SELECT webhook_id, status, width_bucket(duration_ms, '{${DURATION_BOUNDS_MS.join(',')}}'::int[]) AS class FROM recorded WHERE NOT is_ping) r
         GROUP BY ROLLUP (r.webhook_id)
         -- ROLLUP answers its total row even for no outcome (all pings): nothing to count then.
         HAVING count(*) > 0
       ) o
       CROSS JOIN (SELECT floor(extract(epoch FROM now()) / 60)::bigint AS minute) t
       CROSS JOIN LATERAL (VALUES ('minute', t.minute % ${MINUTE_SLOTS}, to_timestamp(t.minute * 60)),
                                  ('hour', (t.minute / 60) % ${HOUR_SLOTS}, to_timestamp(t.minute / 60 * 3600))) AS s(span, slot, bucket)
       ORDER BY 1, 2
       ON CONFLICT (webhook_id, span, slot) DO UPDATE SET
         bucket = excluded.bucket,
         -- The slot's row counts this bucket already: add to it; it counts an older one (the ring came round): start again.
         sent = CASE WHEN c.bucket = excluded.bucket THEN c.sent + excluded.sent ELSE excluded.sent END,
         failed = CASE WHEN c.bucket = excluded.bucket THEN c.failed + excluded.failed ELSE excluded.failed END,
         retried = CASE WHEN c.bucket = excluded.bucket THEN c.retried + excluded.retried ELSE excluded.retried END,
         durations = CASE WHEN c.bucket = excluded.bucket
                          THEN ARRAY[${classes.map((i) => `c.durations[${i + 1}] + excluded.durations[${i + 1}]`).join(', ')}]
                          ELSE excluded.durations END
     )`;

/** A deleted webhook's counts go with it (the all-webhooks rows keep what it did). */
export async function deleteWebhookCounts(tx: Queryable, webhookId: number): Promise<void> {
  await tx.query('DELETE FROM delivery_attempt_counts WHERE webhook_id = $1', [webhookId]);
}
