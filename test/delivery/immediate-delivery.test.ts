import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesDue } from '../../src/outbox/due-signal.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli, waitUntil, type CliRun } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, type TestService, useTestService } from '../support/test-service.js';

// `deliveryFrequency: immediate`: deliveries go out when the transaction that records them commits. The safety
// sweep (DELIVERY_SWEEP_MS) is set to a day here, and no CRON runs: only a wake-up can start a delivery.
const onPostgres = process.env.TEST_DB === 'postgres';
const NO_SWEEP = { DELIVERY_SWEEP_MS: '86400000' };
// A CRON that fires once a year: deliveries are not due by it within a test.
const YEARLY = '0 0 1 1 *';

/** Which backends of the test's database last ran a LISTEN or UNLISTEN of the wake-up channel, and which. */
async function dueChannelStatements(t: TestService): Promise<string[]> {
  const { rows } = await t.db.query<{ query: string }>(
    `SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE '%LISTEN "alert_webhooks_due"%'`,
  );
  return rows.map((r) => r.query);
}

describe('deliveryFrequency immediate, in one process (ROLE=all)', () => {
  const t = useTestService({ env: { ROLE: 'all', ...NO_SWEEP } });
  let receiver: TestReceiver;
  let alertId: number;
  let seq = 0;
  const settings = async (configuration: Record<string, unknown>) => {
    const response = await t.admin.post('/api/config', { path: 'webhooks', configuration });
    expect(response.status, JSON.stringify(response.body)).toBe(204);
  };
  /** Immediate, listening, and the drain its arming started (a sweep at once) over: what comes next is woken. */
  const armImmediate = async () => {
    await settings({ deliveryFrequency: 'immediate' });
    await waitUntil(() => t.service.engine.delivery.armed, 'the delivery task listens for wake-ups', 10_000, 10);
    await t.service.engine.worker.drain();
  };
  const newCase = () => reportMatches(t.admin, 'src', alertId, [{ nodes: [`node-${++seq}`] }]);
  const deliveries = async (webhookId: number) => (await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries`)).body.items;

  beforeAll(async () => {
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterEach(async () => {
    await settings({ deliveryFrequency: '* * * * *', retryScheduleMs: [60000] });
    await t.service.engine.worker.drain();
    await receiver?.close();
    for (const hook of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  it('takes "immediate" and still refuses what is neither a CRON nor a word it knows, naming the option', async () => {
    await settings({ deliveryFrequency: ' immediate ' });
    expect((await t.admin.get('/api/config')).body.webhooks.deliveryFrequency).toBe('immediate');
    const refused = await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: 'immediately' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('webhooks.deliveryFrequency "immediately" is not a valid CRON expression (5 fields, or 6 with seconds, "immediate", or "none"; got 1)');
    const notString = await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: 1 });
    expect(notString.body.message).toBe('webhooks.deliveryFrequency must be a string: a CRON expression, "immediate" or "none"');
    // Cleaning up "immediately" means nothing: cleanupFrequency takes CRON or none only.
    const cleanup = await t.admin.post('/api/config', { path: 'webhooks.cleanupFrequency', configuration: 'immediate' });
    expect(cleanup.status).toBe(400);
    expect(cleanup.body.message).toMatch(/^webhooks\.cleanupFrequency "immediate" is not a valid CRON expression \(5 fields, or 6 with seconds, or "none"; got 1\)$/);
    expect((await t.admin.get('/api/config')).body.webhooks).toMatchObject({ deliveryFrequency: 'immediate', cleanupFrequency: '0 0 * * *' });
  });

  it('sends a new case as soon as it is recorded, with no firing of a schedule; the process is ready meanwhile', async () => {
    receiver = await TestReceiver.start();
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
    await armImmediate();
    expect(t.service.engine.delivery.pattern).toBe('immediate');
    expect(await t.anonymous.get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });
    if (onPostgres) expect(await dueChannelStatements(t)).toEqual(['LISTEN "alert_webhooks_due"']);

    await newCase();
    await receiver.waitFor(1, 15_000);
    await waitUntil(async () => (await deliveries(hook.id))[0]?.status === 'sent', 'the delivery is recorded sent', 15_000);
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ eventType: 'newCase' });

    // And again: each commit wakes the worker, not only the first.
    await newCase();
    await newCase();
    await receiver.waitFor(3, 15_000);
  });

  it('a redelivery goes out at once too', async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = (request, index, response) => answer(index === 0 ? 500 : 204)(request, index, response);
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
    await settings({ retryScheduleMs: [] });
    await armImmediate();
    await newCase();
    await receiver.waitFor(1, 15_000);
    await waitUntil(async () => (await deliveries(hook.id))[0]?.status === 'failed', 'the delivery failed (no retry)', 15_000);
    await t.service.engine.worker.drain();

    const [failed] = await deliveries(hook.id);
    const redelivered = await t.admin.post(`/api/admin/webhooks/${hook.id}/deliveries/${failed.id}/redeliver`);
    expect(redelivered.status).toBe(200);
    await receiver.waitFor(2, 15_000);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(String(failed.id));
  });

  it('back on a CRON it stops listening: a new case waits for the schedule, and goes out when immediate is back', async () => {
    receiver = await TestReceiver.start();
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
    await armImmediate();
    await settings({ deliveryFrequency: YEARLY });
    expect(t.service.engine.delivery.pattern).toBe(YEARLY);
    if (onPostgres) await waitUntil(async () => (await dueChannelStatements(t)).join() === 'UNLISTEN "alert_webhooks_due"', 'the listening connection UNLISTENs', 10_000, 20);

    await newCase();
    // Recorded under a CRON, the case raises no signal; raise one as a commit under immediate would (on PostgreSQL
    // this process then NOTIFYs): a worker still listening would send the case within milliseconds (the tests
    // above), so a second is plenty to show it does not.
    deliveriesDue();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(0);
    expect(await deliveries(hook.id)).toMatchObject([{ status: 'pending', attempts: 0 }]);

    // Arming immediate again looks at once for what was made due meanwhile.
    await settings({ deliveryFrequency: 'immediate' });
    await receiver.waitFor(1, 15_000);
  });
});

describe('deliveryFrequency immediate, across processes', () => {
  const workers: CliRun[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((run) => stopCli(run, 'SIGKILL')));
  });

  it(
    onPostgres
      ? 'a case recorded by a ROLE=api process is sent by a ROLE=worker process, told by NOTIFY'
      : 'a serve process (ROLE=all) sends the case recorded through its API as soon as it commits',
    async () => {
      const testDb = await openTestDatabase();
      const receiver = await TestReceiver.start();
      let t: TestService | undefined;
      try {
        if (onPostgres) {
          t = await startTestService({ testDb }); // ROLE=api: records, never sends
          await createSource(t.admin, 'src');
          const alert = await createAlert(t.admin, 'src');
          const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
          expect((await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: 'immediate' })).status).toBe(204);
          const worker = runCli(['serve'], { DATABASE_URL: testDb.url!, DATA_DIR: '', ROLE: 'worker', METRICS_PORT: '0', LOG_LEVEL: 'info', ...NO_SWEEP });
          workers.push(worker);
          await worker.waitForOutput(/worker is running/, 60_000);

          // The first case shows the worker listens (its arming sweep, or the NOTIFY, sends it). Once its outcome is
          // written and the drain that sent it is over, the second can only go out on a NOTIFY.
          await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['node-1'] }]);
          await receiver.waitFor(1, 30_000);
          const sent = async () => (await t!.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).body.items.filter((d: { status: string }) => d.status === 'sent').length;
          await waitUntil(async () => (await sent()) === 1, 'the first delivery is recorded sent', 15_000);
          await new Promise((resolve) => setTimeout(resolve, 500));

          await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['node-2'] }]);
          await receiver.waitFor(2, 30_000);
          await waitUntil(async () => (await sent()) === 2, 'the second delivery is recorded sent', 15_000);
          expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2);
          // The API process never sent anything itself: it is ROLE=api.
          expect(t.service.engine.delivery.pattern).toBe('none');
        } else {
          // One process holds the embedded database: it records through its own API and hears its own commit.
          await testDb.db.close();
          const port = await freePort();
          const base = `http://127.0.0.1:${port}`;
          const worker = runCli(['serve'], { DATA_DIR: testDb.dataDir!, DATABASE_URL: '', ROLE: 'all', HOST: '127.0.0.1', PORT: String(port), ADMIN_PASSWORD: 'immediate-admin-1', LOG_LEVEL: 'info', ...NO_SWEEP });
          workers.push(worker);
          await worker.waitForOutput(/alert-webhooks is serving/, 60_000);
          const api = await httpAdmin(base, 'immediate-admin-1');
          await api('POST', '/api/admin/sources', { key: 'src', name: 'Source' });
          const alert = await api('POST', '/api/admin/src/alerts', { title: 'Shared phone numbers', description: 'Two clients share a phone' });
          await api('POST', '/api/admin/webhooks', { url: receiver.url, secret: 'test-webhook-secret', events: [{ eventType: 'newCase' }] });
          await api('POST', '/api/config', { path: 'webhooks.deliveryFrequency', configuration: 'immediate' });
          // As above: the first may go out on the arming sweep; the second only on the signal.
          await api('POST', `/api/admin/src/alerts/${alert.id}/matches`, { matches: [{ nodes: ['node-1'] }] });
          await receiver.waitFor(1, 30_000);
          await new Promise((resolve) => setTimeout(resolve, 500));
          await api('POST', `/api/admin/src/alerts/${alert.id}/matches`, { matches: [{ nodes: ['node-2'] }] });
          await receiver.waitFor(2, 30_000);
          expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2);
        }
      } finally {
        await Promise.all(workers.splice(0).map((run) => stopCli(run, 'SIGKILL')));
        await receiver.close();
        await t?.service.close();
        await testDb.dispose();
      }
    },
    120_000,
  );
});

/** A free loopback port. */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Signs in to a service over HTTP as the admin; answers a function that calls the API and its parsed answer. */
async function httpAdmin(base: string, password: string): Promise<(method: string, path: string, body?: unknown) => Promise<{ id?: number }>> {
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail: 'admin', password }) });
  expect(login.status).toBe(200);
  const cookie = /aw\.sid=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  return async (method, path, body) => {
    const response = await fetch(`${base}${path}`, { method, headers: { cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    expect(response.ok, `${method} ${path}: ${response.status} ${text}`).toBe(true);
    return text ? (JSON.parse(text) as { id?: number }) : {};
  };
}
