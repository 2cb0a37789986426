import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { processIdentity } from '../../src/db/data-dir-lock.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli, waitUntil, type CliRun } from '../support/processes.js';
import { TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, openTestDatabase, startTestService } from '../support/test-service.js';
import { TcpProxy } from './tcp-proxy.js';

// A real `serve` process, and what happens around it: on PostgreSQL its connections dropped and its database
// away for a while; on the embedded database a restart that finds a stale lock naming its own pid.
const onPostgres = process.env.TEST_DB === 'postgres';
// Put in the DATABASE_URL: trust authentication never asks for it, and no log line may show it.
const URL_PASSWORD = 'url-password-never-logged';

interface Served {
  run: CliRun;
  base: string;
}

/** A `serve` process (API and worker) on loopback; answers once it listens. */
async function serve(env: Record<string, string>): Promise<Served> {
  const run = runCli(['serve'], { ROLE: 'all', HOST: '127.0.0.1', PORT: '0', ADMIN_PASSWORD, LOG_LEVEL: 'info', ...env });
  await run.waitForOutput(/alert-webhooks is serving/);
  const address = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output())?.[1];
  expect(address, run.output()).toBeDefined();
  return { run, base: address! };
}

const alive = (run: CliRun) => run.child.exitCode === null && run.child.signalCode === null;

async function healthStatus(base: string): Promise<number> {
  const response = await fetch(`${base}/health`);
  await response.body?.cancel();
  return response.status;
}

async function signInOver(base: string): Promise<string> {
  const response = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ usernameOrEmail: 'admin', password: ADMIN_PASSWORD }),
  });
  expect(response.status).toBe(200);
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('aw.sid='));
  expect(cookie).toBeDefined();
  return cookie!.split(';')[0]!;
}

function withPassword(url: string, host?: string, port?: number): string {
  const parsed = new URL(url);
  parsed.password = URL_PASSWORD;
  if (host) parsed.hostname = host;
  if (port) parsed.port = String(port);
  return parsed.toString();
}

if (onPostgres) {
  describe('a service process on PostgreSQL losing its database', () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('survives its connections being terminated, again and again, and listens for changes again', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      const { run, base } = await serve({ DATABASE_URL: withPassword(testDb.url!), DATA_DIR: '' });
      cleanups.push(() => stopCli(run));
      const cookie = await signInOver(base);
      const client = new pg.Client({ connectionString: testDb.url });
      await client.connect();
      cleanups.push(() => client.end());
      // The backends LISTENing on this database: the process's listener connection.
      const listeners = async () =>
        (await client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`)).rows.map(
          (r) => r.pid,
        );
      const deliveryFrequency = async () => {
        const response = await fetch(`${base}/api/config`, { headers: { cookie } });
        return ((await response.json()) as { webhooks: { deliveryFrequency: string } }).webhooks.deliveryFrequency;
      };

      for (let round = 1; round <= 3; round++) {
        const before = await listeners();
        expect(before).toHaveLength(1);
        const terminated = await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
        expect(terminated.rowCount).toBeGreaterThan(0);
        // A new connection LISTENs in the old one's place.
        await waitUntil(async () => (await listeners()).some((pid) => !before.includes(pid)), `the process listens again (round ${round})`, 15_000);
        expect(alive(run), run.output()).toBe(true);
        await waitUntil(async () => (await healthStatus(base)) === 200, `/health answers 200 (round ${round})`, 15_000);

        // A change another process makes, told by NOTIFY, reaches this one well within the 5 s safety-net reread.
        const frequency = `*/${10 + round} * * * * *`;
        await client.query(
          `INSERT INTO settings (section, value) VALUES ('webhooks', jsonb_build_object('deliveryFrequency', $1::text))
           ON CONFLICT (section) DO UPDATE SET value = settings.value || jsonb_build_object('deliveryFrequency', $1::text)`,
          [frequency],
        );
        await client.query(`SELECT pg_notify('alert_webhooks_settings', 'webhooks')`);
        await waitUntil(async () => (await deliveryFrequency()) === frequency, `the process sees deliveryFrequency ${frequency} (round ${round})`, 2_500, 50);
      }
      expect(alive(run)).toBe(true);
      const output = run.output();
      expect(output.match(/lost the database connection that listens for changes/g)).toHaveLength(3);
      expect(output.match(/listening for changes again/g)).toHaveLength(3);
      expect(output).not.toContain(URL_PASSWORD);
    });

    it('answers /health 503 while the database is away and 200 when it is back, and delivers what fell due meanwhile', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      const target = new URL(testDb.url!);
      const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
      cleanups.push(() => proxy.close());
      const receiver = await TestReceiver.start();
      cleanups.push(() => receiver.close());
      // The first attempt fails; the retry, due 5 s later (±20%), falls inside the outage.
      receiver.behaviour = (_request, index, response) => void response.writeHead(index === 0 ? 500 : 204).end();

      // The data is made by an in-process service on a direct connection, which the outage does not touch.
      const t = await startTestService({ testDb });
      cleanups.push(() => t.service.close());
      await createSource(t.admin, 'src');
      const alert = await createAlert(t.admin, 'src');
      const webhook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase' }] });
      const configured = await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '* * * * * *', retryScheduleMs: [5_000, 5_000] } });
      expect(configured.status, JSON.stringify(configured.body)).toBe(204);

      const { run, base } = await serve({ DATABASE_URL: withPassword(testDb.url!, '127.0.0.1', proxy.port), DATA_DIR: '' });
      cleanups.push(() => stopCli(run));
      expect(await healthStatus(base)).toBe(200);

      await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['n1'] }]);
      const delivery = async () =>
        (
          await t.db.query<{ status: string; attempts: number; responseStatus: number | null; due: boolean }>(
            `SELECT status, attempts, response_status AS "responseStatus", COALESCE(next_attempt_at <= now(), false) AS due
             FROM webhook_deliveries WHERE webhook_id = $1`,
            [webhook.id],
          )
        ).rows[0];
      await receiver.waitFor(1);
      await waitUntil(async () => (await delivery())?.responseStatus === 500, 'the failed first attempt is recorded');
      expect(await delivery()).toMatchObject({ status: 'pending', attempts: 1, due: false });

      proxy.cut();
      await waitUntil(async () => (await healthStatus(base)) === 503, '/health answers 503 with the database away', 10_000);
      // The retry falls due while the database is away, and firings come and go without reaching it.
      await waitUntil(async () => (await delivery())?.due === true, 'the retry is due', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(receiver.received).toHaveLength(1);
      expect(await healthStatus(base)).toBe(503);
      expect(alive(run), run.output()).toBe(true);

      proxy.restore();
      await waitUntil(async () => (await healthStatus(base)) === 200, '/health answers 200 with the database back', 15_000);
      await receiver.waitFor(2, 15_000);
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
      await waitUntil(async () => (await delivery())?.status === 'sent', 'the delivery is recorded as sent');
      expect((await delivery())!.attempts).toBe(2);
      // Everything resumed without a restart: the same process, listening again.
      expect(alive(run)).toBe(true);
      await run.waitForOutput(/listening for changes again/, 15_000);
      expect(run.output()).not.toContain(URL_PASSWORD);
    });
  });
} else {
  describe('a service process on the embedded database restarting', () => {
    it('takes over a stale lock that names its own pid (a container restarting as pid 1)', async () => {
      const testDb = await openTestDatabase();
      const dataDir = testDb.dataDir!;
      await testDb.db.close();
      let run: CliRun | undefined;
      try {
        run = runCli(['serve'], { DATA_DIR: dataDir, DATABASE_URL: '', ROLE: 'all', HOST: '127.0.0.1', PORT: '0', ADMIN_PASSWORD, LOG_LEVEL: 'info' });
        // Before the new process gets to its lock (Node takes far longer to start than this write), the lock an
        // earlier process with the same pid left: same pid, same boot, another start time. 'wx': if the process had
        // written its own lock already, this throws rather than test nothing.
        const me = processIdentity(process.pid)!;
        writeFileSync(
          path.join(dataDir, '.lock'),
          JSON.stringify({ pid: run.child.pid, hostname: hostname(), startedAt: 'an earlier boot', startTicks: '1', bootId: me.bootId }),
          { flag: 'wx' },
        );
        await run.waitForOutput(/alert-webhooks is serving/);
        const base = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output())![1]!;
        expect(await healthStatus(base)).toBe(200);
        expect(run.output()).not.toContain('is in use by process');
      } finally {
        if (run) await stopCli(run);
        await testDb.dispose();
      }
    });
  });
}
