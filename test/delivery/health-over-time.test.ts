import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURATION_BOUNDS_MS, DURATION_CLASSES } from '../../src/outbox/attempt-counts.js';
import { percentileOfClasses } from '../../src/outbox/health-over-time.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

// Health over time (docs/api.md, "Health over time"): attempt outcomes counted as they are recorded, per minute and
// hour, read back per minute, hour and UTC day, for one webhook or all.
describe('delivery health over time', () => {
  const t = useTestService();
  let ok: TestReceiver;
  let down: TestReceiver;
  let healthy: number;
  let failing: number;
  let alertId: number;
  let seq = 0;

  const health = async (query: string) => {
    const response = await t.admin.get(`/api/admin/deliveries/health${query}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  /** `count` new cases, each delivered to both webhooks, and every attempt made (a retry step of 0: at once). */
  const deliverCases = async (count: number) => {
    await reportMatches(t.admin, 'src', alertId, Array.from({ length: count }, () => ({ nodes: [`n${++seq}`] })));
    await t.service.engine.worker.drain();
  };

  beforeAll(async () => {
    [ok, down] = await Promise.all([TestReceiver.start(), TestReceiver.start()]);
    down.behaviour = answer(503);
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
    // One retry, at once: each delivery to the failing receiver is one retried attempt, then one failed.
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { retryScheduleMs: [0] } })).status).toBe(204);
    healthy = (await createWebhook(t.admin, { url: ok.url })).id;
    failing = (await createWebhook(t.admin, { url: down.url })).id;
    await deliverCases(3);
    // A ping is an admin's probe, not traffic: not counted.
    expect((await t.admin.post(`/api/admin/webhooks/${healthy}/ping`)).body.status).toBe('sent');
  });
  afterAll(async () => Promise.all([ok?.close(), down?.close()]));

  it('counts every attempt of every webhook by outcome, per minute over the last hour', async () => {
    const body = await health('?range=hour');
    expect(body).toMatchObject({ range: 'hour', webhookId: null, bucketSeconds: 60 });
    expect(body.buckets).toHaveLength(60);
    // Whole UTC minutes, oldest first, the last one the minute now falls in.
    const starts = body.buckets.map((b: { start: string }) => Date.parse(b.start));
    expect(starts.every((s: number, i: number) => s % 60_000 === 0 && (i === 0 || s - starts[i - 1] === 60_000))).toBe(true);
    expect(body.from).toBe(body.buckets[0].start);
    expect(Date.parse(body.to)).toBe(starts[59] + 60_000);
    expect(Date.parse(body.to)).toBeGreaterThan(Date.now() - 5_000);
    const total = (key: 'sent' | 'failed' | 'retried') => body.buckets.reduce((sum: number, b: Record<string, number>) => sum + b[key]!, 0);
    expect({ sent: total('sent'), failed: total('failed'), retried: total('retried') }).toEqual({ sent: 3, failed: 3, retried: 3 });
    expect(body.totals).toMatchObject({ attempts: 9, sent: 3, failed: 3, retried: 3 });
    expect(body.totals.successRate).toBeCloseTo(1 / 3, 10);
    expect(Number.isInteger(body.totals.p95DurationMs) && body.totals.p95DurationMs >= 0).toBe(true);
  });

  it('counts one webhook alone, and the same attempts per hour and per UTC day', async () => {
    expect((await health(`?range=hour&webhookId=${healthy}`)).totals).toMatchObject({ attempts: 3, sent: 3, failed: 0, retried: 0, successRate: 1 });
    expect((await health(`?range=hour&webhookId=${failing}`)).totals).toMatchObject({ attempts: 6, sent: 0, failed: 3, retried: 3, successRate: 0 });

    const day = await health(`?range=day&webhookId=${failing}`);
    expect(day).toMatchObject({ range: 'day', webhookId: failing, bucketSeconds: 3600 });
    expect(day.buckets).toHaveLength(24);
    expect(day.buckets.every((b: { start: string }) => Date.parse(b.start) % 3_600_000 === 0)).toBe(true);
    expect(day.totals).toMatchObject({ attempts: 6, failed: 3, retried: 3 });

    const week = await health('?range=week');
    expect(week.buckets).toHaveLength(7);
    expect(week.buckets.every((b: { start: string }) => b.start.endsWith('T00:00:00.000Z'))).toBe(true);
    expect(week.buckets[6].sent + week.buckets[5].sent).toBe(3);
    expect(week.totals).toMatchObject({ attempts: 9, sent: 3, failed: 3, retried: 3 });
  });

  it('starts a ring slot again when its bucket comes round, rather than adding to an older lap', async () => {
    // The healthy webhook's rings full of an older lap: every minute slot counting a minute of 2–4 hours ago, every
    // hour slot an hour of 8–16 days ago, 50 sent each.
    await t.db.query('DELETE FROM delivery_attempt_counts WHERE webhook_id = $1', [healthy]);
    for (const [span, slots, seconds] of [['minute', 120, 60], ['hour', 192, 3600]] as const) {
      await t.db.query(
        `INSERT INTO delivery_attempt_counts (webhook_id, span, slot, bucket, sent, failed, retried, durations)
         SELECT $1, $2, (b.n % $3)::smallint, to_timestamp(b.n * $4), 50, 0, 0, array_fill(0, ARRAY[$5::int])
         FROM (SELECT floor(extract(epoch FROM now()) / $4)::bigint - $3 - i AS n FROM generate_series(0, $3 - 1) i) b`,
        [healthy, span, slots, seconds, DURATION_CLASSES],
      );
    }
    // Out of every window now; the next outcomes take over the slots they land on, their counts started again.
    expect((await health(`?range=week&webhookId=${healthy}`)).totals.attempts).toBe(0);
    await deliverCases(1);
    const { rows } = await t.db.query<{ span: string; slots: number; current: number[] }>(
      `SELECT span, count(*)::int AS slots, array_agg(sent) FILTER (WHERE bucket > now() - interval '1 hour') AS current
       FROM delivery_attempt_counts WHERE webhook_id = $1 GROUP BY span ORDER BY span`,
      [healthy],
    );
    expect(rows).toEqual([
      { span: 'hour', slots: 192, current: [1] },
      { span: 'minute', slots: 120, current: [1] },
    ]);
    expect((await health(`?range=hour&webhookId=${healthy}`)).totals).toMatchObject({ attempts: 1, sent: 1 });
  });

  it('forgets a deleted webhook, whose attempts still count among all', async () => {
    expect((await t.admin.delete(`/api/admin/webhooks/${failing}`)).status).toBe(204);
    expect((await t.db.query('SELECT 1 FROM delivery_attempt_counts WHERE webhook_id = $1', [failing])).rows).toEqual([]);
    expect((await t.admin.get(`/api/admin/deliveries/health?webhookId=${failing}`)).status).toBe(404);
    expect((await health('?range=day')).totals).toMatchObject({ sent: 4, failed: 4, retried: 4 });
  });

  it('refuses a bad range, and callers who are not Admins', async () => {
    const bad = await t.admin.get('/api/admin/deliveries/health?range=month');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ key: 'invalid_parameter', field: 'range' });
    expect(bad.body.message).toContain('"hour", "day", "week"');
    expect((await t.anonymous.get('/api/admin/deliveries/health')).status).toBe(401);
    const analyst = await t.userClient('ana');
    expect((await analyst.get('/api/admin/deliveries/health')).status).toBe(403);
  });
});

describe('the p95 read from duration classes', () => {
  const histogram = (counts: Record<number, number>) => Array.from({ length: DURATION_CLASSES }, (_, i) => counts[i] ?? 0);
  const classOf = (ms: number) => DURATION_BOUNDS_MS.filter((bound) => bound <= ms).length;

  it('interpolates inside the class the 95th attempt falls in', () => {
    expect(percentileOfClasses(histogram({}), 0.95)).toBeNull();
    // 100 attempts of 100–149 ms: the 95th is 95% of the way through the class.
    expect(percentileOfClasses(histogram({ [classOf(120)]: 100 }), 0.95)).toBe(148);
    // 90 fast ones and 10 slow ones: the 95th is half-way through the slow class (1000–1500 ms).
    expect(percentileOfClasses(histogram({ [classOf(5)]: 90, [classOf(1200)]: 10 }), 0.95)).toBe(1250);
    // At or past 60 s: the top class answers its lower bound.
    expect(percentileOfClasses(histogram({ [classOf(90_000)]: 3 }), 0.95)).toBe(60_000);
  });
});
