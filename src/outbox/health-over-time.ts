/**
 * Delivery health over time: attempt outcomes per bucket for the last hour (by minute), day (by hour) or week (by
 * UTC day), for one webhook or all, with the window's success rate and p95 attempt duration. Read from the counts the
 * outcome statement keeps (attempt-counts.ts), never from the deliveries: one indexed read of at most one ring of
 * rows, whatever the number of deliveries kept, and a history that outlives their retention.
 */
import type { Queryable } from '../db/database.js';
import { DURATION_BOUNDS_MS, DURATION_CLASSES } from './attempt-counts.js';
import type { HealthRange, HealthOverTime, HealthBucket } from './schemas.js';

interface RangeShape {
  /** The counts' span read. */
  span: 'minute' | 'hour';
  /** The answer's bucket, in seconds; a multiple of the span's. */
  bucketSeconds: number;
  buckets: number;
}

export const HEALTH_RANGES: Record<HealthRange, RangeShape> = {
  hour: { span: 'minute', bucketSeconds: 60, buckets: 60 },
  day: { span: 'hour', bucketSeconds: 3600, buckets: 24 },
  week: { span: 'hour', bucketSeconds: 86_400, buckets: 7 },
};

interface CountRow {
  window_start: Date;
  bucket: Date | null;
  sent: number | null;
  failed: number | null;
  retried: number | null;
  durations: number[] | null;
}

/**
 * The window is the bucket now falls in and the `buckets - 1` before it, aligned on UTC (whole minutes, hours,
 * days), from the database's clock, as the counts are. Rows of the (webhook, span) ring outside it (an older lap of
 * the ring) are left out by `bucket`. The statement reads the primary key's (webhook_id, span) prefix: at most 192
 * rows, and a row for the window's start even when nothing was counted. Exported so a test can EXPLAIN it.
 */
export const READ_COUNTS_SQL = `WITH w AS (
    SELECT to_timestamp((floor(extract(epoch FROM now()) / $3) - ($4 - 1)) * $3) AS start
  )
  SELECT w.start AS window_start, c.bucket, c.sent, c.failed, c.retried, c.durations
  FROM w LEFT JOIN delivery_attempt_counts c ON c.webhook_id = $1 AND c.span = $2 AND c.bucket >= w.start`;

/** The parameters of READ_COUNTS_SQL. */
export function readCountsParameters(range: HealthRange, webhookId: number | null): unknown[] {
  const shape = HEALTH_RANGES[range];
  return [webhookId ?? 0, shape.span, shape.bucketSeconds, shape.buckets];
}

/** `webhookId` null: every webhook together (deleted ones included: their attempts happened). */
export async function readHealthOverTime(db: Queryable, range: HealthRange, webhookId: number | null): Promise<HealthOverTime> {
  const shape = HEALTH_RANGES[range];
  const { rows } = await db.query<CountRow>(READ_COUNTS_SQL, readCountsParameters(range, webhookId));
  const start = rows[0]!.window_start.getTime();
  const size = shape.bucketSeconds * 1000;
  const buckets: HealthBucket[] = Array.from({ length: shape.buckets }, (_, i) => ({
    start: new Date(start + i * size).toISOString(),
    sent: 0,
    failed: 0,
    retried: 0,
  }));
  const histogram = new Array<number>(DURATION_CLASSES).fill(0);
  for (const row of rows) {
    if (row.bucket === null) continue;
    const bucket = buckets[Math.floor((row.bucket.getTime() - start) / size)];
    // A bucket after the window's end: a row written by a clock ahead of the one that read (another server's).
    if (!bucket) continue;
    bucket.sent += row.sent!;
    bucket.failed += row.failed!;
    bucket.retried += row.retried!;
    row.durations!.forEach((n, i) => (histogram[i]! += n));
  }
  const sent = sum(buckets.map((b) => b.sent));
  const failed = sum(buckets.map((b) => b.failed));
  const retried = sum(buckets.map((b) => b.retried));
  const attempts = sent + failed + retried;
  return {
    range,
    webhookId,
    bucketSeconds: shape.bucketSeconds,
    from: buckets[0]!.start,
    to: new Date(start + shape.buckets * size).toISOString(),
    buckets,
    totals: {
      attempts,
      sent,
      failed,
      retried,
      successRate: attempts === 0 ? null : sent / attempts,
      p95DurationMs: percentileOfClasses(histogram, 0.95),
    },
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * The `q` quantile of durations counted by class, interpolated linearly inside the class it falls in (the top class,
 * 60 s and more, answers its lower bound); null when nothing was counted.
 */
export function percentileOfClasses(histogram: readonly number[], q: number): number | null {
  const total = sum([...histogram]);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i]!;
    if (count > 0 && below + count >= rank) {
      const low = i === 0 ? 0 : DURATION_BOUNDS_MS[i - 1]!;
      const high = DURATION_BOUNDS_MS[i];
      if (high === undefined) return low;
      return Math.round(low + ((rank - below) / count) * (high - low));
    }
    below += count;
  }
  return DURATION_BOUNDS_MS[DURATION_BOUNDS_MS.length - 1]!;
}
