/**
 * A week of deliveries written straight into the database with SQL (delivering a million for real would take the
 * bench an hour and measure the sender, not the reads): the operator bench's data (bench/operator.ts, bench/README.md
 * "Health over time and search").
 *
 * Events over the last 7 days, oldest first (ids follow time, as they do in service), each delivered to 2 of the
 * webhooks (picked by a hash of its id): 20% newCase, 70% newMatch, 9.9% caseStatusChange, 0.1% ping; 40 alerts, a case for every 5 events.
 * Deliveries: 96% sent (answered 200 or 204), 3% failed (500, 503, 404 or no answer), 1% pending (recent ones,
 * due in a minute, last answered 503). Plus a week of attempt counts for every webhook and for all of them.
 */
import type { Queryable } from '../../src/db/database.js';
import { DURATION_CLASSES, HOUR_SLOTS, MINUTE_SLOTS } from '../../src/outbox/attempt-counts.js';

export interface SeedPlan {
  deliveries: number;
  webhooks: number;
  /** Rows per statement: PGlite's memory stays flat. */
  chunk?: number;
  onProgress?: (done: number) => void;
}

export const SEED_ALERTS = 40;
export const EVENTS_PER_CASE = 5;
const FAN_OUT = 2;
const WEEK_SECONDS = 7 * 86_400;

export async function seedOperatorData(db: Queryable, plan: SeedPlan): Promise<{ events: number; firstEventId: number }> {
  const events = Math.ceil(plan.deliveries / FAN_OUT);
  const chunk = plan.chunk ?? 50_000;
  await db.query(
    `INSERT INTO webhooks (url, secret, description)
     SELECT 'http://127.0.0.1:9/bench-' || g, 'operator-bench-secret', 'bench receiver ' || g || (CASE WHEN g % 2 = 0 THEN ' (billing)' ELSE ' (fraud team)' END)
     FROM generate_series(1, $1::int) g`,
    [plan.webhooks],
  );
  const { rows } = await db.query<{ base: number }>(`SELECT coalesce(max(id), 0) AS base FROM webhook_events`);
  const base = Number(rows[0]!.base);
  for (let from = 1; from <= events; from += chunk) {
    const to = Math.min(events, from + chunk - 1);
    // Event g happens at now() - 7 days + g/events of the week; its type, alert and case follow from g.
    await db.query(
      `WITH e AS (
         INSERT INTO webhook_events (id, event_type, payload, alert_id, case_id, created_at)
         SELECT $4 + g, t.event_type,
                CASE WHEN t.event_type = 'ping' THEN '{"eventType":"ping","data":{"webhookId":1}}'
                     ELSE '{"eventType":"' || t.event_type || '","sourceKey":"bench","data":{"alert":{"id":' || (g % $5) + 1 ||
                          ',"title":"Bench alert","description":""},"case":{"id":' || (g / $6) + 1 || ',"createdAt":"2026-11-20T00:00:00.000Z",' ||
                          '"target":{"nodes":["n' || g || '","m' || g || '"],"edges":["e' || g || '"]},"url":"http://localhost:3000/alerts/' ||
                          (g % $5) + 1 || '/case/' || (g / $6) + 1 || '"}}}' END,
                CASE WHEN t.event_type = 'ping' THEN NULL ELSE (g % $5) + 1 END,
                CASE WHEN t.event_type = 'ping' THEN NULL ELSE (g / $6) + 1 END,
                now() - interval '7 days' + (g::float8 / $3) * ($7 * interval '1 second')
         FROM generate_series($1::int, $2::int) g
         CROSS JOIN LATERAL (SELECT CASE WHEN g % 1000 = 0 THEN 'ping' WHEN g % 10 < 2 THEN 'newCase' WHEN g % 10 < 9 THEN 'newMatch' ELSE 'caseStatusChange' END AS event_type) t
         RETURNING id, created_at, event_type
       )
       INSERT INTO webhook_deliveries (webhook_id, event_id, is_ping, status, attempts, next_attempt_at, sent_date, last_attempt_at, finished_at,
                                       response_status, error, attempt_log, created_at, updated_at)
       SELECT 1 + (abs(hashint8(e.id)) + k) % $8, e.id, e.event_type = 'ping', s.status, CASE s.status WHEN 'sent' THEN 1 ELSE 3 END,
              CASE WHEN s.status = 'pending' THEN now() + interval '1 minute' END,
              CASE WHEN s.status = 'sent' THEN e.created_at + interval '40 milliseconds' END,
              e.created_at + interval '40 milliseconds',
              CASE WHEN s.status <> 'pending' THEN e.created_at + interval '40 milliseconds' END,
              s.answer, CASE WHEN s.status = 'sent' THEN NULL WHEN s.answer IS NULL THEN 'timed out after 10000 ms' ELSE 'HTTP ' || s.answer END,
              ('[{"attemptedAt":"' || to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","durationMs":40' ||
               coalesce(',"responseStatus":' || s.answer, '') || '}]')::jsonb,
              e.created_at, e.created_at + interval '40 milliseconds'
       FROM e CROSS JOIN generate_series(0, ${FAN_OUT - 1}) k
       -- Hashed, so a delivery's fate does not follow its webhook or event type (as a product of ids would).
       CROSS JOIN LATERAL (SELECT abs(hashint8(e.id * ${FAN_OUT} + k)) % 100 AS roll, abs(hashint8(-e.id * ${FAN_OUT} - k)) % 4 AS pick) r
       CROSS JOIN LATERAL (
         SELECT CASE WHEN r.roll < 3 THEN 'failed' WHEN r.roll = 3 AND e.created_at > now() - interval '1 day' THEN 'pending' ELSE 'sent' END AS status,
                CASE WHEN r.roll < 3 THEN (ARRAY[500, 503, 404, NULL])[1 + r.pick]
                     WHEN r.roll = 3 AND e.created_at > now() - interval '1 day' THEN 503
                     ELSE (ARRAY[200, 204])[1 + r.pick % 2] END AS answer
       ) s
       ORDER BY e.id, k`,
      [from, to, events, base, SEED_ALERTS, EVENTS_PER_CASE, WEEK_SECONDS, plan.webhooks],
    );
    plan.onProgress?.(Math.min(plan.deliveries, to * FAN_OUT));
  }
  await db.query(`SELECT setval(pg_get_serial_sequence('webhook_events', 'id'), (SELECT max(id) FROM webhook_events))`);
  await seedAttemptCounts(db, plan.webhooks);
  await db.query('ANALYZE webhook_events');
  await db.query('ANALYZE webhook_deliveries');
  await db.query('ANALYZE delivery_attempt_counts');
  return { events, firstEventId: base + 1 };
}

/**
 * Full rings of counts for every webhook and for all (webhook 0): every minute of the last two hours and every hour
 * of the last eight days, a few hundred attempts each, durations spread over the classes from 10 to 300 ms.
 */
async function seedAttemptCounts(db: Queryable, webhooks: number): Promise<void> {
  const durations = `ARRAY(SELECT CASE WHEN c BETWEEN 6 AND 14 THEN 10 + (c * 7 + w) % 20 ELSE 0 END FROM generate_series(0, ${DURATION_CLASSES - 1}) c)`;
  for (const [span, slots, seconds] of [
    ['minute', MINUTE_SLOTS, 60],
    ['hour', HOUR_SLOTS, 3600],
  ] as const) {
    await db.query(
      `INSERT INTO delivery_attempt_counts (webhook_id, span, slot, bucket, sent, failed, retried, durations)
       SELECT w, $1, (b.n % $2)::smallint, to_timestamp(b.n * $3), 90 + (b.n + w) % 20, (b.n + w) % 3, (b.n * w) % 5, ${durations}
       FROM generate_series(0, $4::int) w
       CROSS JOIN LATERAL (SELECT floor(extract(epoch FROM now()) / $3)::bigint - i AS n FROM generate_series(0, $2 - 1) i) b
       ON CONFLICT DO NOTHING`,
      [span, slots, seconds, webhooks],
    );
  }
}
