import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { verifyPayloadHmac } from '../../src/index.js';
import { removeDir } from '../support/databases.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli, waitUntil, type CliRun, type Finished } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/test-service.js';

// Real worker processes (`serve` with ROLE=worker) on the file's database. On PostgreSQL several run at once next
// to the in-process service; the embedded database serves one process, so there the in-process service lets go
// of DATA_DIR while a worker process holds it, and takes it back to look at the rows.
const onPostgres = process.env.TEST_DB === 'postgres';
const EVERY_SECOND = '* * * * * *';
// The default requestTimeoutMs: a stopping worker lets its attempts in flight run at most this long.
const REQUEST_TIMEOUT_MS = 10_000;

interface DeliveryRow {
  id: number;
  webhookId: number;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  locked: boolean;
  due: boolean;
}

async function deliveryRows(db: Database): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT id, webhook_id AS "webhookId", status, attempts, locked_until IS NOT NULL AS locked,
            COALESCE(next_attempt_at <= now(), false) AS due
     FROM webhook_deliveries ORDER BY id`,
  );
  return rows;
}

/** How many times the receiver got each delivery id (`webhook-id`). */
function receivedCounts(receiver: TestReceiver): Map<number, number> {
  const counts = new Map<number, number>();
  for (const request of receiver.received) {
    const id = Number(request.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Resolves with how the process ended, or rejects if it is still running after `timeoutMs`. */
function exitWithin(run: CliRun, timeoutMs: number): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the process did not exit within ${timeoutMs} ms:\n${run.output()}`)), timeoutMs);
    void run.finished.then((result) => (clearTimeout(timer), resolve(result)));
  });
}

/**
 * One test's world: its own database, the in-process service (ROLE=api: it never sends) that creates the data,
 * a receiver, and the worker processes, all cleaned up by `dispose`.
 */
class Harness {
  readonly workers: CliRun[] = [];
  readonly services: TestService[] = [];

  private constructor(
    readonly testDb: TestDatabase,
    public t: TestService,
    readonly receiver: TestReceiver,
  ) {}

  static async start(): Promise<Harness> {
    const testDb = await openTestDatabase();
    const t = await startTestService({ testDb });
    const receiver = await TestReceiver.start();
    const harness = new Harness(testDb, t, receiver);
    harness.services.push(t);
    return harness;
  }

  /**
   * One alert with `matches` new cases and `webhooks` webhooks at the receiver, each with its own secret:
   * webhooks × matches pending deliveries, sent when `deliveryFrequency` fires. Answers the secrets by webhook id.
   */
  async seed(webhooks: number, matches: number, deliveryFrequency: string): Promise<Map<number, string>> {
    const { admin } = this.t;
    await createSource(admin, 'src');
    const alert = await createAlert(admin, 'src');
    const secrets = new Map<number, string>();
    for (let i = 0; i < webhooks; i++) {
      const secret = `webhook-secret-${i}-${Math.random().toString(36).slice(2)}`;
      secrets.set((await createWebhook(admin, { url: this.receiver.url, secret, events: [{ eventType: 'newCase' }] })).id, secret);
    }
    await this.setFrequency(deliveryFrequency);
    const cases = await reportMatches(admin, 'src', alert.id, Array.from({ length: matches }, (_, i) => ({ nodes: [`node-${i}`] })));
    expect(cases.filter((c) => c.created)).toHaveLength(matches);
    expect((await deliveryRows(this.testDb.db)).filter((r) => r.status === 'pending' && r.attempts === 0)).toHaveLength(webhooks * matches);
    return secrets;
  }

  async setFrequency(deliveryFrequency: string): Promise<void> {
    const response = await this.t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency } });
    expect(response.status, JSON.stringify(response.body)).toBe(204);
  }

  /** A real `serve` process with ROLE=worker on this database. */
  worker(env: Record<string, string> = {}): CliRun {
    const database: Record<string, string> = onPostgres ? { DATABASE_URL: this.testDb.url!, DATA_DIR: '' } : { DATA_DIR: this.testDb.dataDir!, DATABASE_URL: '' };
    // METRICS_PORT 0: no health listener, so that several worker processes can run side by side.
    const run = runCli(['serve'], { ...database, ROLE: 'worker', ADMIN_PASSWORD: 'x-admin-password', LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env });
    this.workers.push(run);
    return run;
  }

  /** Embedded database: the in-process service and database let go of DATA_DIR, for a worker process to open it. */
  async handOver(): Promise<void> {
    if (onPostgres) return;
    await this.t.service.close();
    await this.testDb.db.close();
    expect(existsSync(path.join(this.testDb.dataDir!, '.lock'))).toBe(false);
  }

  /** Embedded database: opens DATA_DIR again (no worker process may hold it). Answers the database to look at rows. */
  async takeBack(): Promise<Database> {
    if (!onPostgres) this.testDb.db = await createDatabase({ dataDir: this.testDb.dataDir! });
    return this.testDb.db;
  }

  /** Embedded database: the in-process service started again on the reopened DATA_DIR (PostgreSQL: still running). */
  async restartService(): Promise<TestService> {
    if (onPostgres) return this.t;
    this.t = await startTestService({ testDb: this.testDb });
    this.services.push(this.t);
    return this.t;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.workers.map((run) => stopCli(run, 'SIGKILL')));
    await this.receiver.close();
    for (const service of this.services) await service.service.close();
    await this.testDb.dispose();
  }
}

describe('worker processes on one database (docs/api.md, Deliveries)', () => {
  it(
    onPostgres ? 'three worker processes drain 5,000 deliveries, each sent exactly once' : 'a worker process drains 5,000 deliveries, each sent exactly once',
    async () => {
      const h = await Harness.start();
      try {
        // No schedule while the workers start, so that all of them are running when the deliveries fall due.
        const secrets = await h.seed(10, 500, onPostgres ? 'none' : EVERY_SECOND);
        await h.handOver();
        const workers = Array.from({ length: onPostgres ? 3 : 1 }, () => h.worker({ LOG_LEVEL: 'info' }));
        await Promise.all(workers.map((run) => run.waitForOutput(/worker is running/, 60_000)));
        if (onPostgres) await h.setFrequency(EVERY_SECOND);

        await h.receiver.waitFor(5_000, 120_000);
        if (onPostgres) {
          // The live workers write every outcome.
          await waitUntil(async () => (await deliveryRows(h.t.db)).every((r) => r.status === 'sent'), 'every delivery is sent', 30_000);
        }
        // A graceful stop: nothing left to finish, nothing sent again.
        for (const result of await Promise.all(workers.map((run) => stopCli(run)))) expect(result.code, result.stderr).toBe(0);
        const rows = await deliveryRows(await h.takeBack());

        const ids = h.receiver.received.map((r) => Number(r.headers['webhook-id']));
        expect(ids).toHaveLength(5_000);
        expect(new Set(ids).size).toBe(5_000);
        expect([...new Set(ids)].sort((a, b) => a - b)).toEqual(rows.map((r) => r.id));
        expect(rows.filter((r) => r.status === 'sent' && r.attempts === 1 && !r.locked)).toHaveLength(5_000);
        // Each request was signed with its own webhook's secret.
        const webhookOf = new Map(rows.map((r) => [r.id, r.webhookId]));
        const unverified = h.receiver.received.filter((r) => {
          const secret = secrets.get(webhookOf.get(Number(r.headers['webhook-id']))!)!;
          return !verifyPayloadHmac(secret, r.body, r.headers['x-payload-hmac']);
        });
        expect(unverified).toHaveLength(0);
      } finally {
        await h.dispose();
      }
    },
    240_000,
  );

  // On PostgreSQL its claims lapse at the end of their lease; the embedded database, which one process holds at a
  // time, releases them as the next process starts (the lease here is 10 minutes, beyond the test's wait).
  it('a worker killed with SIGKILL mid-delivery loses nothing: its deliveries go out after the lease, or at the next start on PGlite', async () => {
    const h = await Harness.start();
    try {
      // The receiver holds every request: all 50 are in flight when the worker dies.
      const held: ServerResponse[] = [];
      h.receiver.behaviour = (_request, _index, response) => void held.push(response);
      await h.seed(5, 10, EVERY_SECOND);
      await h.handOver();
      const env = { DELIVERY_LEASE_MS: onPostgres ? '3000' : '600000' };
      const first = h.worker(env);
      await h.receiver.waitFor(50, 60_000);
      first.child.kill('SIGKILL');
      expect((await first.finished).signal).toBe('SIGKILL');
      // The answers go nowhere: the process that asked is gone.
      for (const response of held.splice(0)) answer(204)({ headers: {}, body: '', at: 0 }, 0, response);

      // Every delivery is still pending, its attempt counted and its claim left to lapse.
      let db: Database;
      let snapshot: string | undefined;
      if (onPostgres) {
        db = h.t.db;
      } else {
        // The dead process left its lock file; a copy of DATA_DIR is opened here, so that the next worker
        // process is the one to take the lock over.
        const lock = JSON.parse(readFileSync(path.join(h.testDb.dataDir!, '.lock'), 'utf8')) as { pid: number };
        expect(lock.pid).toBe(first.child.pid);
        snapshot = mkdtempSync(path.join(tmpdir(), 'aw-killed-'));
        cpSync(h.testDb.dataDir!, snapshot, { recursive: true });
        db = await createDatabase({ dataDir: snapshot });
      }
      try {
        const rows = await deliveryRows(db);
        expect(rows).toHaveLength(50);
        expect(rows.filter((r) => r.status === 'pending' && r.attempts === 1 && r.locked)).toHaveLength(50);
      } finally {
        if (snapshot) {
          await db.close();
          removeDir(snapshot);
        }
      }
      const beforeRestart = new Set(h.receiver.received.map((r) => Number(r.headers['webhook-id'])));
      expect(beforeRestart.size).toBe(50);

      h.receiver.behaviour = answer(204);
      const second = h.worker(env);
      // Each delivery again once its lease is over (at least once: a second copy is allowed).
      await waitUntil(() => [...receivedCounts(h.receiver).values()].filter((n) => n >= 2).length === 50, 'every delivery is received again', 60_000);
      if (onPostgres) await waitUntil(async () => (await deliveryRows(h.t.db)).every((r) => r.status === 'sent'), 'every delivery is sent', 30_000);
      const stopped = await stopCli(second);
      expect(stopped.code, stopped.stderr).toBe(0);

      const rows = await deliveryRows(await h.takeBack());
      expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual([...beforeRestart].sort((a, b) => a - b));
      for (const row of rows) {
        expect(row).toMatchObject({ status: 'sent', locked: false });
        // The attempt the dead process made still counts.
        expect(row.attempts).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await h.dispose();
    }
  }, 180_000);

  it('SIGTERM lets attempts in flight finish, gives queued claims back and leaves no row locked', async () => {
    const h = await Harness.start();
    try {
      h.receiver.behaviour = (request, index, response) => void setTimeout(() => answer(204)(request, index, response), 300);
      // One webhook: 16 attempts in flight at a time, the rest of a claim queued behind them.
      await h.seed(1, 300, EVERY_SECOND);
      await h.handOver();
      const run = h.worker();
      await h.receiver.waitFor(20, 60_000);
      run.child.kill('SIGTERM');
      const result = await exitWithin(run, REQUEST_TIMEOUT_MS + 20_000);
      expect(result.code, result.stderr).toBe(0);

      const db = await h.takeBack();
      expect((await db.query<{ n: number }>('SELECT count(*) AS n FROM webhook_deliveries WHERE locked_until IS NOT NULL')).rows[0]!.n).toBe(0);
      const rows = await deliveryRows(db);
      expect(rows).toHaveLength(300);
      const counts = receivedCounts(h.receiver);
      for (const row of rows) {
        // Sent, or due now (a claim given back is due at once), never waiting for a lease.
        if (row.status !== 'sent') expect(row).toMatchObject({ status: 'pending', due: true });
        // An attempt counts only if it was made.
        expect({ id: row.id, attempts: row.attempts }).toEqual({ id: row.id, attempts: counts.get(row.id) ?? 0 });
      }
      // It stopped before the end: there is something left to send.
      expect(rows.filter((r) => r.status === 'pending').length).toBeGreaterThan(0);

      // The rest goes out (here, from the in-process worker), and over both, each delivery exactly once.
      const t = await h.restartService();
      await t.service.engine.worker.drain();
      const after = await deliveryRows(t.db);
      expect(after.filter((r) => r.status === 'sent' && r.attempts === 1 && !r.locked)).toHaveLength(300);
      const ids = h.receiver.received.map((r) => Number(r.headers['webhook-id']));
      expect(ids).toHaveLength(300);
      expect(new Set(ids).size).toBe(300);
    } finally {
      await h.dispose();
    }
  }, 180_000);
});
