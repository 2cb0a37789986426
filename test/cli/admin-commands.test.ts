import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { stopCli, waitUntil } from '../support/processes.js';
import { ADMIN_PASSWORD, openTestDatabase, startTestService, type TestDatabase } from '../support/test-service.js';
import { cli, cliWithInput, dbEnv, serve, signInOver } from './cli-support.js';

// The admin commands as real processes on the test file's database, as an operator runs them: on the embedded
// database with no service holding it, on PostgreSQL also beside a running service.
const onPostgres = process.env.TEST_DB === 'postgres';

describe('alert-webhooks admin commands', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A database with the bootstrap admin, left closed, so that a CLI process may open it. */
  async function databaseWithAdmin(prepare?: (t: Awaited<ReturnType<typeof startTestService>>) => Promise<void>): Promise<TestDatabase> {
    const testDb = await openTestDatabase();
    cleanups.push(() => testDb.dispose());
    const t = await startTestService({ testDb });
    await prepare?.(t);
    await t.service.close();
    await testDb.db.close();
    return testDb;
  }

  const reopen = (testDb: TestDatabase) => createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });

  it('admin reset-password: a generated password, or one from stdin, that signs in; the old password and sessions end', async () => {
    let oldCookie = '';
    const testDb = await databaseWithAdmin(async (t) => {
      const login = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
      oldCookie = `aw.sid=${login.cookies.find((c) => c.name === 'aw.sid')!.value}`;
    });
    const env = dbEnv(testDb);

    const generated = await cli(['admin', 'reset-password', 'admin'], env);
    expect(generated.code, generated.stderr).toBe(0);
    const password = /New password: (\S+)/.exec(generated.stdout)?.[1];
    expect(password, generated.stdout).toMatch(/^\S{16,}$/);
    expect(generated.stdout).toContain('their sessions have ended');

    const unknown = await cli(['admin', 'reset-password', 'nobody'], env);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr.trim()).toBe('alert-webhooks: there is no user "nobody" (give a username or an email address)');
    // The API's rule, and nothing changed: the generated password still signs in below.
    const short = await cliWithInput(['admin', 'reset-password', 'admin'], 'short', env);
    expect(short.code).toBe(1);
    expect(short.stderr.trim()).toBe('alert-webhooks: password must be at least 8 characters long');
    const missing = await cli(['admin', 'reset-password'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('usage: alert-webhooks admin reset-password <username>');

    let served = await serve(env);
    cleanups.push(() => stopCli(served.run));
    expect((await signInOver(served.base, 'admin', ADMIN_PASSWORD)).status).toBe(401);
    expect((await signInOver(served.base, 'admin', password!)).status).toBe(200);
    const me = await fetch(`${served.base}/api/auth/me`, { headers: { cookie: oldCookie } });
    await me.body?.cancel();
    expect(me.status).toBe(401);
    await stopCli(served.run);

    // From stdin (a pipe): that password, printed nowhere.
    const chosen = await cliWithInput(['admin', 'reset-password', 'admin@localhost'], 'a chosen password 9', env);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stdout).not.toContain('New password');
    expect(chosen.stdout).not.toContain('a chosen password 9');
    served = await serve(env);
    cleanups.push(() => stopCli(served.run));
    expect((await signInOver(served.base, 'admin', 'a chosen password 9')).status).toBe(200);
    expect((await signInOver(served.base, 'admin', password!)).status).toBe(401);
  }, 120_000);

  it('config set then get, with the API rules; a bad value changes nothing', async () => {
    const env = dbEnv(await databaseWithAdmin());

    const set = await cli(['config', 'set', 'deliveryFrequency', '*/10 * * * * *'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe('webhooks.deliveryFrequency = "*/10 * * * * *"');
    expect((await cli(['config', 'get', 'deliveryFrequency'], env)).stdout.trim()).toBe('"*/10 * * * * *"');

    // JSON when it is JSON: an array, a boolean; `webhooks.` as POST /api/config's path writes it.
    expect((await cli(['config', 'set', 'webhooks.retryScheduleMs', '[1000, 2000]'], env)).code).toBe(0);
    expect((await cli(['config', 'set', 'enabled', 'false'], env)).code).toBe(0);
    const all = await cli(['config', 'get'], env);
    expect(JSON.parse(all.stdout)).toMatchObject({ enabled: false, deliveryFrequency: '*/10 * * * * *', retryScheduleMs: [1000, 2000], requestTimeoutMs: 10000 });

    const bad = await cli(['config', 'set', 'requestTimeoutMs', '5'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('alert-webhooks: webhooks.requestTimeoutMs must be an integer from 1000 to 60000, got 5');
    expect((await cli(['config', 'get', 'requestTimeoutMs'], env)).stdout.trim()).toBe('10000');
    const unknown = await cli(['config', 'get', 'frobnicate'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('webhooks.frobnicate is not a setting; the webhooks options are enabled, deliveryFrequency');
    expect((await cli(['config', 'set', 'deliveryFrequency'], env)).code).toBe(2);
  }, 90_000);

  it('webhooks list, and deliveries redeliver --failed turning failed deliveries into pending ones due now', async () => {
    const ids: number[] = [];
    const testDb = await databaseWithAdmin(async (t) => {
      await createSource(t.admin, 'src');
      const alert = await createAlert(t.admin, 'src');
      ids.push((await createWebhook(t.admin, { url: 'http://127.0.0.1:9/first', events: [{ eventType: 'newCase' }] })).id);
      ids.push((await createWebhook(t.admin, { url: 'http://127.0.0.1:9/second', events: [{ eventType: 'newCase', sourceKey: 'src' }, { eventType: 'newMatch' }] })).id);
      await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['a'] }, { nodes: ['b'] }]);
      // Every delivery ended failed two hours ago, as after a receiver's outage; one of the first webhook's, days ago.
      const failed = await t.db.query(
        `UPDATE webhook_deliveries SET status = 'failed', attempts = 8, next_attempt_at = NULL, finished_at = now() - interval '2 hours',
           updated_at = now() - interval '2 hours', error = 'connect ECONNREFUSED'`,
      );
      expect(failed.rowCount).toBe(4);
      await t.db.query(
        `UPDATE webhook_deliveries SET finished_at = now() - interval '3 days' WHERE id = (SELECT min(id) FROM webhook_deliveries WHERE webhook_id = $1)`,
        [ids[0]],
      );
    });
    const env = dbEnv(testDb);

    const list = await cli(['webhooks', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^id +url +events +created$/);
    expect(lines[1]).toMatch(new RegExp(`^${ids[0]} +http://127\\.0\\.0\\.1:9/first +newCase +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`));
    expect(lines[2]).toMatch(new RegExp(`^${ids[1]} +http://127\\.0\\.0\\.1:9/second +newCase@src,newMatch +\\d{4}-`));
    expect(lines).toHaveLength(3);

    const db = () => reopen(testDb);
    const before = await db();
    const tokens = new Map((await before.query<{ id: number; lease_token: number }>('SELECT id, lease_token FROM webhook_deliveries')).rows.map((r) => [r.id, r.lease_token]));
    await before.close();

    // Usage errors: exit 2, nothing changed.
    expect((await cli(['deliveries', 'redeliver'], env)).code).toBe(2);
    const badSince = await cli(['deliveries', 'redeliver', '--failed', '--since', 'yesterday'], env);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain('--since must be an ISO 8601 date or date and time');
    const unknownWebhook = await cli(['deliveries', 'redeliver', '--failed', '--webhook', '999999'], env);
    expect(unknownWebhook.code).toBe(1);
    expect(unknownWebhook.stderr.trim()).toBe('alert-webhooks: webhook 999999 was not found');

    const since = new Date(Date.now() - 86_400_000).toISOString();
    const first = await cli(['deliveries', 'redeliver', '--failed', '--webhook', String(ids[0]), '--since', since], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(`1 failed delivery of webhook ${ids[0]} failed since ${since} made pending and due now.`);
    const rest = await cli(['deliveries', 'redeliver', '--failed'], env);
    expect(rest.stdout.trim()).toBe('3 failed deliveries made pending and due now.');
    expect((await cli(['deliveries', 'redeliver', '--failed'], env)).stdout.trim()).toBe('0 failed deliveries made pending and due now.');

    const after = await db();
    try {
      const { rows } = await after.query<{ id: number; status: string; attempts: number; due: boolean; finished_at: Date | null; locked_until: Date | null; lease_token: number }>(
        `SELECT id, status, attempts, next_attempt_at <= now() AS due, finished_at, locked_until, lease_token FROM webhook_deliveries ORDER BY id`,
      );
      expect(rows).toHaveLength(4);
      for (const row of rows) {
        expect(row).toMatchObject({ status: 'pending', attempts: 0, due: true, finished_at: null, locked_until: null, lease_token: tokens.get(row.id)! + 1 });
      }
    } finally {
      await after.close();
    }
  }, 90_000);

  if (onPostgres) {
    it('config set reaches a running service at once (NOTIFY); webhooks list runs beside it', async () => {
      const testDb = await databaseWithAdmin();
      const env = dbEnv(testDb);
      const { run, base } = await serve(env);
      cleanups.push(() => stopCli(run));
      const { cookie } = await signInOver(base, 'admin', ADMIN_PASSWORD);
      const frequency = async () => ((await (await fetch(`${base}/api/config`, { headers: { cookie: cookie! } })).json()) as { webhooks: { deliveryFrequency: string } }).webhooks.deliveryFrequency;
      expect(await frequency()).toBe('* * * * *');
      const set = await cli(['config', 'set', 'deliveryFrequency', '*/7 * * * * *'], env);
      expect(set.code, set.stderr).toBe(0);
      // Well within the 5 s safety-net reread: the NOTIFY told it.
      await waitUntil(async () => (await frequency()) === '*/7 * * * * *', 'the service sees the new deliveryFrequency', 2_500, 50);
      const list = await cli(['webhooks', 'list'], env);
      expect(list).toMatchObject({ code: 0, stdout: 'No webhooks.\n' });
    }, 90_000);
  } else {
    it('refuses, naming the API call to use instead, while a service holds the embedded database', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      // This test process holds DATA_DIR, as a running service would.
      const env = dbEnv(testDb);
      const list = await cli(['webhooks', 'list'], env);
      expect(list.code).toBe(1);
      expect(list.stdout).toBe('');
      const line = list.stderr.trim();
      expect(line.split('\n')).toHaveLength(1);
      expect(line).toContain(`the embedded database in ${testDb.dataDir} is held by a running service (process ${process.pid} on `);
      expect(line).toContain("Use that service's API instead (GET /api/admin/webhooks), or stop the service and run this command again.");
      const set = await cli(['config', 'set', 'enabled', 'false'], env);
      expect(set.code).toBe(1);
      expect(set.stderr).toContain('API instead (POST /api/config');
      expect((await testDb.db.query<{ value: unknown }>(`SELECT value FROM settings WHERE section = 'webhooks'`)).rows[0]?.value ?? {}).not.toMatchObject({ enabled: false });

      const nowhere = await cli(['webhooks', 'list'], { DATABASE_URL: '', DATA_DIR: `${testDb.dataDir}-missing` });
      expect(nowhere.code).toBe(1);
      expect(nowhere.stderr.trim()).toBe(
        `alert-webhooks: DATA_DIR ${testDb.dataDir}-missing does not exist, so there is no database to work on: set DATA_DIR (or DATABASE_URL) to where the service keeps its data.`,
      );
    }, 60_000);
  }
});
