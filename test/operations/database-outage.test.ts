import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { waitUntil } from '../support/processes.js';
import { openTestDatabase, startTestService, type TestService } from '../support/test-service.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { openTestDatabaseBehindProxy, type TcpProxy } from './tcp-proxy.js';

// The API with its database away: PostgreSQL behind a proxy this file cuts (the shared server is never touched); the
// embedded database by stopping its thread, which does not come back.
const onPostgres = process.env.TEST_DB === 'postgres';

describe('the API while the database is away', () => {
  let t: TestService;
  let proxy: TcpProxy | undefined;
  const lines: { level: number; msg: string; err?: unknown }[] = [];
  beforeAll(async () => {
    let testDb;
    if (onPostgres) ({ testDb, proxy } = await openTestDatabaseBehindProxy());
    else testDb = await openTestDatabase();
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    t = await startTestService({ testDb, logger });
  });
  afterAll(async () => {
    await t?.close();
    await t?.testDb.dispose();
  });

  it('answers 503 database_unavailable with Retry-After, logs it once, and /health answers 503 even with a session cookie', async () => {
    expect((await t.admin.get('/api/admin/webhooks')).status).toBe(200);
    if (proxy) proxy.cut();
    else await t.db.close();

    for (let i = 0; i < 5; i++) {
      const answer = await t.admin.get('/api/admin/webhooks');
      expect(answer).toMatchObject({ status: 503, body: { key: 'database_unavailable', message: 'the database is unavailable right now: try again in 5 seconds' } });
      expect(answer.headers['retry-after']).toBe('5');
    }
    // Sign-in and a change are refused the same way.
    expect((await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'admin', password: 'wrong-password' })).body).toMatchObject({ key: 'database_unavailable' });
    expect((await t.admin.post('/api/admin/sources', { key: 'away', name: 'Away' })).status).toBe(503);

    // Health checks never look up the session: a browser's cookie does not turn them into a 500.
    expect(await t.admin.get('/health')).toMatchObject({ status: 503, body: { status: 'unavailable', message: 'the database does not answer' } });
    expect(await t.admin.get('/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await t.admin.get('/api/openapi.json')).status).toBe(200);

    const outage = lines.filter((line) => line.msg.startsWith('the database is unavailable'));
    expect(outage).toHaveLength(1);
    expect(outage[0]!.level).toBe(40);
    // No stack, no error-level line for an outage.
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);

    if (proxy) {
      proxy.restore();
      await waitUntil(async () => (await t.admin.get('/api/admin/webhooks')).status === 200, 'the API answers again with the database back', 20_000);
      expect(lines.filter((line) => line.msg === 'the database answers again')).toHaveLength(1);
    }
  }, 60_000);
});

if (onPostgres) {
  describe('deliveries across an outage longer than their lease', () => {
    let t: TestService;
    let proxy: TcpProxy;
    let receiver: TestReceiver;
    beforeAll(async () => {
      let testDb;
      ({ testDb, proxy } = await openTestDatabaseBehindProxy());
      // A lease of 1 s, so a short outage outlasts it.
      t = await startTestService({ testDb, env: { DELIVERY_LEASE_MS: '1000' } });
      receiver = await TestReceiver.start();
    });
    afterAll(async () => {
      await receiver?.close();
      await t?.close();
      await t?.testDb.dispose();
    });

    it('writes the outcomes it held before claiming again, so nothing answered during the outage is sent twice', async () => {
      await createSource(t.admin, 'outage');
      const alert = await createAlert(t.admin, 'outage');
      await createWebhook(t.admin, { url: receiver.url });
      await reportMatches(t.admin, 'outage', alert.id, [{ nodes: ['a'] }, { nodes: ['b'] }, { nodes: ['c'] }, { nodes: ['d'] }]);

      // The receiver holds every request until the database is away, then answers 204.
      const held: (() => void)[] = [];
      receiver.behaviour = (_request, _index, response) => void held.push(() => response.writeHead(204).end());
      const worker = t.service.engine.worker;
      const firstDrain = worker.drain().catch(() => 'failed');
      await receiver.waitFor(4);
      proxy.cut();
      for (const release of held.splice(0)) release();
      expect(await firstDrain).toBe('failed');
      // Longer than the lease: the rows are due again in the database's eyes.
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      proxy.restore();
      receiver.behaviour = answer(204);
      await worker.drain();
      await worker.drain();
      expect(receiver.received).toHaveLength(4);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(4);
      const { rows } = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_deliveries');
      expect(rows).toEqual(Array(4).fill({ status: 'sent', attempts: 1 }));
    }, 60_000);
  });
}
