import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dbEnv, freePort } from '../cli/cli-support.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, type TestService } from '../support/test-service.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
// A documentation address (TEST-NET-3): only used as the injected peer's address, never connected to.
const REMOTE = '203.0.113.7';

/** The value of the sample `name{labels}` in a text exposition; undefined when there is no such sample. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  let t: TestService;
  let receiver: TestReceiver | undefined;
  let alertId: number;
  let seq = 0;
  beforeAll(async () => {
    t = await startTestService({ env: { METRICS_TOKEN } });
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterAll(async () => t?.close());
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  const scrape = async (): Promise<string> => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' }); // inject's peer is 127.0.0.1
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.body;
  };

  it('counts each attempt by webhook and outcome, its duration, the claim, the flush and the recorded event', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(204);
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
    const failing = await TestReceiver.start();
    failing.behaviour = answer(500);
    const retried = await createWebhook(t.admin, { url: failing.url, events: [{ eventType: 'newCase' }] });
    try {
      expect((await t.admin.post('/api/config', { path: 'webhooks.retryScheduleMs', configuration: [60_000] })).status).toBe(204);
      const before = await scrape();
      const eventsBefore = sample(before, 'webhook_events_recorded_total', { event_type: 'newCase' }) ?? 0;
      expect(sample(before, 'webhook_delivery_attempts_total', { webhook: String(hook.id), outcome: 'sent' })).toBeUndefined();

      await reportMatches(t.admin, 'src', alertId, [{ nodes: [`node-${++seq}`] }]);
      await t.service.engine.worker.drain();

      const after = await scrape();
      expect(sample(after, 'webhook_delivery_attempts_total', { webhook: String(hook.id), outcome: 'sent' })).toBe(1);
      expect(sample(after, 'webhook_delivery_attempts_total', { webhook: String(hook.id), outcome: 'retry' })).toBe(0);
      expect(sample(after, 'webhook_delivery_attempts_total', { webhook: String(retried.id), outcome: 'retry' })).toBe(1);
      expect(sample(after, 'webhook_delivery_attempts_total', { webhook: String(retried.id), outcome: 'sent' })).toBe(0);
      expect(sample(after, 'webhook_delivery_attempt_duration_seconds_count', { webhook: String(hook.id) })).toBe(1);
      expect(sample(after, 'webhook_delivery_attempt_duration_seconds_sum', { webhook: String(hook.id) })).toBeGreaterThan(0);
      expect(sample(after, 'webhook_events_recorded_total', { event_type: 'newCase' })).toBe(eventsBefore + 1);
      expect(sample(after, 'webhook_claim_duration_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(sample(after, 'webhook_outcome_flush_duration_seconds_count')).toBeGreaterThanOrEqual(1);
      // Node's default process metrics, in this process's own registry.
      expect(sample(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(after).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    } finally {
      await failing.close();
      await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
      await t.admin.delete(`/api/admin/webhooks/${retried.id}`);
    }
  });

  it('shows a backlog in due and its age, the failed deliveries, and a disabled webhook, from the database', async () => {
    const hook = await createWebhook(t.admin, { events: [{ eventType: 'newCase' }] });
    const webhook = String(hook.id);
    try {
      // No foreign keys on the queue (see migration 0003): any event id will do. Five due for 90 s, one not yet due,
      // two ended failed; in flight or not, a due delivery is backlog.
      await t.db.query(`INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at) SELECT $1, i, now() - interval '90 seconds' FROM generate_series(1, 5) AS i`, [hook.id]);
      await t.db.query(`INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at) VALUES ($1, 6, now() + interval '1 hour')`, [hook.id]);
      await t.db.query(`INSERT INTO webhook_deliveries (webhook_id, event_id, status, finished_at) SELECT $1, i, 'failed', now() FROM generate_series(7, 8) AS i`, [hook.id]);
      await t.db.query('UPDATE webhooks SET enabled = false WHERE id = $1', [hook.id]);
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the 1 s cache of an earlier scrape

      const text = await scrape();
      expect(sample(text, 'webhook_deliveries_due', { webhook })).toBe(5);
      const age = sample(text, 'webhook_deliveries_oldest_due_age_seconds', { webhook })!;
      expect(age).toBeGreaterThanOrEqual(90);
      expect(age).toBeLessThan(90 + 60);
      expect(sample(text, 'webhook_deliveries_failed', { webhook })).toBe(2);
      expect(sample(text, 'webhook_disabled', { webhook })).toBe(1);

      // Sent, the backlog is gone (after the cache's second).
      await t.db.query(`UPDATE webhook_deliveries SET status = 'sent', finished_at = now() WHERE webhook_id = $1 AND status = 'pending'`, [hook.id]);
      await t.db.query('UPDATE webhooks SET enabled = true WHERE id = $1', [hook.id]);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const drained = await scrape();
      expect(sample(drained, 'webhook_deliveries_due', { webhook })).toBe(0);
      expect(sample(drained, 'webhook_deliveries_oldest_due_age_seconds', { webhook })).toBe(0);
      expect(sample(drained, 'webhook_disabled', { webhook })).toBe(0);
    } finally {
      await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    }
  });

  it('is open on loopback; from elsewhere it takes an Admin session, an Admin API key or the METRICS_TOKEN bearer', async () => {
    const from = (headers: Record<string, string> = {}, remoteAddress = REMOTE) => t.app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers });
    const refused = await from();
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ key: 'unauthorized', message: expect.stringContaining('METRICS_TOKEN') });

    expect((await from(sessionOf(t.admin))).statusCode).toBe(200);
    expect((await from({ authorization: `Bearer ${METRICS_TOKEN}` })).statusCode).toBe(200);
    expect((await from({ authorization: `Bearer ${METRICS_TOKEN}x` })).statusCode).toBe(401);
    expect((await from({ authorization: 'Bearer ' })).statusCode).toBe(401);

    // An Admin's API key counts; a user who is no Admin does not.
    const application = (await t.admin.post('/api/admin/applications', { name: 'prometheus', groups: [1] })).body;
    const basic = `Basic ${Buffer.from(`admin@localhost:${application.apiKey}`).toString('base64')}`;
    expect((await from({ authorization: basic })).statusCode).toBe(200);
    const user = await t.userClient('metrics-viewer');
    expect((await from(sessionOf(user))).statusCode).toBe(401);

    // Through a proxy on this host the peer is loopback, but the client is not: not open.
    expect((await from({ 'x-forwarded-for': REMOTE }, '127.0.0.1')).statusCode).toBe(401);
  });
});

/** The headers a signed-in client sends (its session cookie), to send them from another peer. */
function sessionOf(client: TestService['admin']): Record<string, string> {
  return (client as unknown as { headers: Record<string, string> }).headers;
}

describe('a worker-only process', () => {
  it('answers /metrics and /health on METRICS_PORT', async () => {
    const testDb = await openTestDatabase();
    await testDb.db.close(); // the process opens it (the embedded one is one process's at a time)
    const port = await freePort();
    const run = runCli(['serve'], { ...dbEnv(testDb), ROLE: 'worker', HOST: '127.0.0.1', METRICS_PORT: String(port), METRICS_TOKEN, LOG_LEVEL: 'info' });
    try {
      await run.waitForOutput(/alert-webhooks worker is running/, 60_000);
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(text).toContain('# TYPE webhook_delivery_attempts_total counter');
      expect(text).toContain('# TYPE webhook_deliveries_due gauge');
      expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      await stopCli(run);
      await testDb.dispose();
    }
  }, 90_000);
});
