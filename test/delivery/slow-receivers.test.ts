import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { BlackHole, TestReceiver, trickle } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

const SECRET = 'slow-receivers-secret';
const TIMEOUT_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it holds, for at most `timeoutMs`. */
async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(100);
  }
}

// The process's own schedule (ROLE=all) fires every second, as in production: these tests see what it does.
describe('slow receivers never hold other webhooks (the real schedule)', () => {
  const t = useTestService({ env: { ROLE: 'all' } });
  let healthy: TestReceiver;
  const alerts = new Map<string, number>();
  let seq = 0;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    for (const key of ['slow', 'fast']) {
      await createSource(t.admin, key);
      alerts.set(key, (await createAlert(t.admin, key)).id);
    }
    const set = await t.admin.post('/api/config', {
      path: 'webhooks',
      // Timed-out attempts are not retried during a test.
      configuration: { deliveryFrequency: '* * * * * *', requestTimeoutMs: TIMEOUT_MS, retryScheduleMs: [600_000] },
    });
    expect(set.status).toBe(204);
  });
  afterEach(async () => {
    for (const hook of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    for (const close of closers.splice(0)) await close();
  });

  /** A webhook for the newCase events of one data source. */
  async function hook(url: string, sourceKey: string): Promise<number> {
    return (await createWebhook(t.admin, { url, secret: SECRET, events: [{ eventType: 'newCase', sourceKey }] })).id;
  }
  /** `count` new cases on a data source: one delivery each to its webhook. */
  async function newCases(sourceKey: string, count: number): Promise<void> {
    const matches = Array.from({ length: count }, () => ({ nodes: [`${sourceKey}-${++seq}`] }));
    await reportMatches(t.admin, sourceKey, alerts.get(sourceKey)!, matches);
  }
  async function attemptLogs(webhookId: number): Promise<{ error?: string; durationMs: number }[][]> {
    const { rows } = await t.db.query<{ log: { error?: string; durationMs: number }[] }>('SELECT attempt_log AS log FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]);
    return rows.map((r) => r.log);
  }
  async function startHealthy(): Promise<TestReceiver> {
    healthy = await TestReceiver.start();
    closers.push(() => healthy.close());
    return healthy;
  }

  it('ends each attempt to a trickling receiver at its deadline, and delivers to a healthy webhook meanwhile', async () => {
    const trickler = await TestReceiver.start();
    closers.push(() => trickler.close());
    trickler.behaviour = trickle(150); // headers at once, then 1 byte every 150 ms, never ending
    await startHealthy();
    const slowHook = await hook(trickler.url, 'slow');
    await hook(healthy.url, 'fast');

    await newCases('slow', 10);
    await trickler.waitFor(10, 5000); // all 10 attempts in flight (the lane's bound is 16)
    await newCases('fast', 10);
    // The healthy webhook's deliveries, reported after the trickler's attempts began, all arrive while those
    // attempts are still in flight (they run TIMEOUT_MS).
    await healthy.waitFor(10, TIMEOUT_MS - 1500);
    expect(trickler.inFlight).toBe(10);
    expect((await attemptLogs(slowHook)).every((log) => log.length === 0)).toBe(true);

    // Each trickling attempt ends at its deadline, whatever the gaps between the bytes.
    await eventually(async () => (await attemptLogs(slowHook)).every((log) => log.length === 1), TIMEOUT_MS + 5000, 'the trickling attempts end');
    for (const [attempt] of await attemptLogs(slowHook)) {
      expect(attempt!.error).toBe(`timed out after ${TIMEOUT_MS} ms`);
      expect(attempt!.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
      expect(attempt!.durationMs).toBeLessThan(TIMEOUT_MS + 2000);
    }
    expect(trickler.received).toHaveLength(10); // not retried yet (the retry step is 10 minutes)
  });

  it('delivers a healthy webhook’s new delivery at once while a black hole holds 40', async () => {
    const hole = await BlackHole.start();
    closers.push(() => hole.close());
    await startHealthy();
    await hook(hole.url, 'slow');
    await hook(healthy.url, 'fast');

    await newCases('slow', 40);
    await eventually(() => hole.connections >= 16, 5000, 'the black hole holds a lane of attempts'); // its lane's bound
    const reportedAt = Date.now();
    await newCases('fast', 1);
    // A generous bound, well below the black hole's time-out: before, it waited for the black hole's attempts.
    await healthy.waitFor(1, 2500);
    expect(Date.now() - reportedAt).toBeLessThan(TIMEOUT_MS);
    expect(hole.open).toBeGreaterThanOrEqual(16); // the black hole's attempts were still in flight
  });

  it('still delivers to a healthy webhook when black holes hold every slot of the process', async () => {
    const hole = await BlackHole.start();
    closers.push(() => hole.close());
    await startHealthy();
    // Four webhooks at their bound of 16 each: the process's 64 slots.
    for (let i = 0; i < 4; i++) await hook(`${hole.url}?n=${i}`, 'slow');
    await hook(healthy.url, 'fast');

    await newCases('slow', 20);
    await eventually(() => hole.open >= 64, 5000, 'the black holes hold 64 attempts');
    await newCases('fast', 3);
    await healthy.waitFor(3, 2500);
    expect(hole.open).toBeGreaterThanOrEqual(64);
  });

  it('still claims for a healthy webhook when black holes hold more claims than the process claims ahead', async () => {
    // Nine black holes, each its own receiver with a full lane of 16 in flight and the rest waiting. On PostgreSQL a
    // lane holds 32: 288 claims, more than the 256 (4 × 64) the process claims ahead; on PGlite a lane holds 64:
    // 576, more than its 512 (8 × 64; see CLAIM_DEPTH in claim-depth.ts). Their claims must not keep the healthy
    // webhook's from being made.
    const { lane, ahead } = t.db.kind === 'pglite' ? { lane: 64, ahead: 512 } : { lane: 32, ahead: 256 };
    const holes: BlackHole[] = [];
    for (let i = 0; i < 9; i++) {
      const hole = await BlackHole.start();
      closers.push(() => hole.close());
      holes.push(hole);
    }
    await startHealthy();
    for (const hole of holes) await hook(hole.url, 'slow');
    await hook(healthy.url, 'fast');

    await newCases('slow', lane + 8);
    await eventually(async () => {
      const { rows } = await t.db.query<{ claimed: number }>(`SELECT count(*)::int AS claimed FROM webhook_deliveries WHERE locked_until > now() AND status = 'pending'`);
      return rows[0]!.claimed >= ahead;
    }, 5000, "the black holes' lanes hold the process's claims");
    await newCases('fast', 3);
    await healthy.waitFor(3, 2500);
    expect(holes.reduce((open, hole) => open + hole.open, 0)).toBeGreaterThanOrEqual(64); // still in flight
  });
});
