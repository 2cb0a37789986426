import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { waitUntil } from '../support/processes.js';
import { BlackHole } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

// Longer than the test: no attempt to the black hole times out (and leaves its lane) while the lane is counted.
const TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/*
 * How far ahead the worker claims, by database (CLAIM_DEPTH in src/delivery/claim-depth.ts): on PostgreSQL a webhook's
 * lane holds twice its concurrency of 16, and a claim is held for the time-out × 5 + 5 s; on PGlite, where fewer,
 * larger claims spend less of the embedded database's one thread, four times, and the time-out × 9 + 5 s.
 */
describe('claim depth (the real schedule)', () => {
  const t = useTestService({ env: { ROLE: 'all' } });
  let hole: BlackHole;

  beforeAll(async () => {
    hole = await BlackHole.start();
    await createSource(t.admin, 'deep');
    const alert = await createAlert(t.admin, 'deep');
    await createWebhook(t.admin, { url: hole.url, secret: 'claim-depth-secret', events: [{ eventType: 'newCase', sourceKey: 'deep' }] });
    await reportMatches(t.admin, 'deep', alert.id, Array.from({ length: 100 }, (_, i) => ({ nodes: [`deep-${i}`] })));
    const set = await t.admin.post('/api/config', {
      path: 'webhooks',
      configuration: { deliveryFrequency: '* * * * * *', requestTimeoutMs: TIMEOUT_MS, retryScheduleMs: [600_000] },
    });
    expect(set.status).toBe(204);
  });
  afterAll(async () => {
    await hole?.close();
  });

  it('holds a lane of 32 claims on PostgreSQL and 64 on PGlite for one stuck webhook, each leased for its wait', async () => {
    const expected = t.db.kind === 'pglite' ? { lane: 64, leaseMs: TIMEOUT_MS * 9 + 5000 } : { lane: 32, leaseMs: TIMEOUT_MS * 5 + 5000 };
    const claimed = async () => {
      const { rows } = await t.db.query<{ claimed: number; leftMs: number }>(
        `SELECT count(*)::int AS claimed, max(extract(epoch FROM locked_until - now()) * 1000)::float8 AS "leftMs"
         FROM webhook_deliveries WHERE locked_until > now() AND status = 'pending'`,
      );
      return rows[0]!;
    };
    await waitUntil(async () => hole.open >= 16 && (await claimed()).claimed >= expected.lane, `the lane holds ${expected.lane} claims, 16 in flight`, 5000);
    // A few firings later the lane holds no more: 16 in flight (the webhook's concurrency), the rest waiting.
    await sleep(2500);
    const held = await claimed();
    expect(held.claimed).toBe(expected.lane);
    expect(hole.open).toBe(16);
    expect(held.leftMs).toBeLessThanOrEqual(expected.leaseMs);
    // Taken a few seconds ago: 155 s on PostgreSQL, 275 s on PGlite at this time-out.
    expect(held.leftMs).toBeGreaterThan(expected.leaseMs - 10_000);
  });
});
