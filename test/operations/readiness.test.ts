import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stopCli, waitUntil } from '../support/processes.js';
import { openTestDatabase, startTestService } from '../support/test-service.js';
import { dbEnv, freePort, serve } from '../cli/cli-support.js';
import { TcpProxy } from './tcp-proxy.js';

// /health/live and /health/ready: in-process for what each checks, real processes for a database that goes away
// and comes back, and for ROLE=worker, which answers them on METRICS_PORT.
const onPostgres = process.env.TEST_DB === 'postgres';

async function statusOf(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('liveness and readiness', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('is ready with the migrations applied and the schedules running; not ready when either is not, or the database is gone', async () => {
    const t = await startTestService({ env: { ROLE: 'all' } });
    cleanups.push(() => t.close());
    expect(await t.anonymous.get('/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await t.anonymous.get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });

    // A migration this version ships is missing from the database.
    const { rows } = await t.db.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1');
    const last = rows[0]!;
    await t.db.query('DELETE FROM schema_migrations WHERE version = $1', [last.version]);
    const lacking = await t.anonymous.get('/health/ready');
    expect(lacking.status).toBe(503);
    expect(lacking.body).toEqual({
      status: 'unavailable',
      message: `the database lacks migrations ${String(last.version).padStart(4, '0')}_${last.name}: run alert-webhooks migrate`,
    });
    await t.db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [last.version, last.name]);
    expect((await t.anonymous.get('/health/ready')).status).toBe(200);

    // Webhooks disabled: the schedules are meant to be off, and that is ready.
    expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false })).status).toBe(204);
    expect(t.service.engine.delivery.pattern).toBe('none');
    expect((await t.anonymous.get('/health/ready')).status).toBe(200);
    expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true })).status).toBe(204);

    // The engine stopped while the settings say it should deliver.
    await t.service.engine.stop();
    expect(await t.anonymous.get('/health/ready')).toMatchObject({ status: 503, body: { status: 'unavailable', message: 'the delivery schedule is not running' } });
    // Liveness asks nothing of the database or the schedules.
    await t.db.close();
    expect(await t.anonymous.get('/health/ready')).toMatchObject({ status: 503, body: { message: 'the database does not answer' } });
    expect((await t.anonymous.get('/health/live')).status).toBe(200);
  });

  it('ROLE=api runs no schedules, and readiness does not ask for them', async () => {
    const t = await startTestService({ env: { ROLE: 'api' } });
    cleanups.push(() => t.close());
    expect(t.service.engine.delivery.pattern).toBe('none');
    expect(await t.anonymous.get('/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('a worker-only process answers /health, /health/live and /health/ready on METRICS_PORT, and no API', async () => {
    const testDb = await openTestDatabase();
    cleanups.push(() => testDb.dispose());
    await testDb.db.close();
    const port = await freePort();
    const run = runCli(['serve'], { ...dbEnv(testDb), ROLE: 'worker', HOST: '127.0.0.1', METRICS_PORT: String(port), LOG_LEVEL: 'info' });
    cleanups.push(() => stopCli(run));
    await run.waitForOutput(/alert-webhooks worker is running/, 60_000);
    expect(run.output()).toContain(`"health":"http://127.0.0.1:${port}"`);
    const base = `http://127.0.0.1:${port}`;
    for (const path of ['/health', '/health/live', '/health/ready']) expect(await statusOf(`${base}${path}`), path).toEqual({ status: 200, body: { status: 'ok' } });
    for (const path of ['/api/config', '/api/openapi.json', '/']) expect((await statusOf(`${base}${path}`)).status, path).toBe(404);
  }, 90_000);

  if (onPostgres) {
    it('a serve process turns not ready when its database is gone, and ready when it returns', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      const target = new URL(testDb.url!);
      const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
      cleanups.push(() => proxy.close());
      const proxied = new URL(testDb.url!);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      const { run, base } = await serve({ DATABASE_URL: proxied.toString(), DATA_DIR: '' });
      cleanups.push(() => stopCli(run));
      const ready = async () => (await statusOf(`${base}/health/ready`)).status;
      expect(await ready()).toBe(200);

      proxy.cut();
      await waitUntil(async () => (await ready()) === 503, '/health/ready answers 503 with the database away', 15_000);
      expect(await statusOf(`${base}/health/ready`)).toEqual({ status: 503, body: { status: 'unavailable', message: 'the database does not answer' } });
      expect((await statusOf(`${base}/health/live`)).status).toBe(200);

      proxy.restore();
      await waitUntil(async () => (await ready()) === 200, '/health/ready answers 200 with the database back', 20_000);
      await run.waitForOutput(/readiness: ready again/, 5_000);
    }, 90_000);
  } else {
    it('a serve process on the embedded database is ready once it listens', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      await testDb.db.close();
      const { run, base } = await serve(dbEnv(testDb));
      cleanups.push(() => stopCli(run));
      expect(await statusOf(`${base}/health/ready`)).toEqual({ status: 200, body: { status: 'ok' } });
      expect(await statusOf(`${base}/health/live`)).toEqual({ status: 200, body: { status: 'ok' } });
    }, 90_000);
  }
});
