import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createWebhook } from '../support/fixtures.js';
import { removeDir } from '../support/databases.js';
import { stopCli, waitUntil } from '../support/processes.js';
import { ADMIN_PASSWORD, openTestDatabase, startTestService } from '../support/test-service.js';
import { dbEnv, serve, signInOver } from '../cli/cli-support.js';

// Issue 26: a process killed mid-run loses its claim and the run is done again, recording nothing twice. A real
// `serve` process runs an alert over an embedded graph big enough that its run takes a moment, and is killed with
// SIGKILL while it runs.
const onPostgres = process.env.TEST_DB === 'postgres';
const ACCOUNTS = 10_000;

async function counts(db: Database) {
  const { rows } = await db.query<{ runs: number; cases: number; matches: number; events: number; distinct_events: number; deliveries: number }>(
    `SELECT (SELECT count(*) FROM alert_runs) AS runs, (SELECT count(*) FROM cases) AS cases, (SELECT count(*) FROM alert_matches) AS matches,
            (SELECT count(*) FROM webhook_events) AS events, (SELECT count(DISTINCT payload::jsonb->'data'->'case'->'id') FROM webhook_events) AS distinct_events,
            (SELECT count(*) FROM webhook_deliveries) AS deliveries`,
  );
  return rows[0]!;
}

describe('an alert run killed with its process', () => {
  it('records nothing; after the restart the run is done again, each match, case and event once', async () => {
    const testDb = await openTestDatabase();
    // On PostgreSQL, DATA_DIR holds only the embedded graph.
    const graphDir = onPostgres ? mkdtempSync(path.join(tmpdir(), 'aw-graphs-')) : testDb.dataDir!;
    const env = { ...dbEnv(testDb), DATA_DIR: graphDir, ALERTS_MAX_MATCHES_LIMIT: String(ACCOUNTS), GRAPH_MEMORY_MB: '64' };
    const reopen = () => createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    let served: Awaited<ReturnType<typeof serve>> | undefined;
    let db: Database | undefined;
    try {
      // The graph, the webhook (delivery off: its deliveries are written, never sent) and the alert, in this process.
      const t = await startTestService({ testDb, env: { DATA_DIR: graphDir, ALERTS_MAX_MATCHES_LIMIT: String(ACCOUNTS) } });
      expect((await t.admin.post('/api/admin/sources', { key: 'big', name: 'Big', graph: { vendor: 'embedded' } })).status).toBe(201);
      for (const query of ['CREATE NODE TABLE Account(id INT64, PRIMARY KEY(id))', `UNWIND range(1, ${ACCOUNTS}) AS i CREATE (:Account {id: i})`]) {
        const answer = await t.admin.post('/api/big/graph/run/query', { query });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: 'none' } })).status).toBe(204);
      await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'big' }, { eventType: 'newMatch', sourceKey: 'big' }] });
      const alert = await t.admin.post('/api/admin/big/alerts', { title: 'Every account', queries: [{ name: 'accounts', query: 'MATCH (a:Account) RETURN a' }], maxMatches: ACCOUNTS });
      expect(alert.status, JSON.stringify(alert.body)).toBe(201);
      const alertId: number = alert.body.id;
      await t.service.close();
      await testDb.db.close();

      // A serve process is asked to run it, and killed once the run is under way: on PostgreSQL, once its
      // transaction has written (it holds the alert's lock and has a transaction id); embedded, once it is claimed.
      served = await serve(env);
      const { cookie } = await signInOver(served.base, 'admin', ADMIN_PASSWORD);
      const api = async (method: string, url: string, body?: unknown): Promise<Record<string, unknown>> => {
        const response = await fetch(`${served!.base}${url}`, { method, headers: { cookie: cookie!, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
        return (await response.json()) as Record<string, unknown>;
      };
      expect(await api('POST', `/api/admin/big/alerts/${alertId}/run`, {})).toEqual({ alreadyRunning: false });
      if (onPostgres) {
        db = await reopen();
        const writing = async () =>
          (await db!.query<{ n: number }>(
            `SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.granted AND a.backend_xid IS NOT NULL AND a.datname = current_database()`,
          )).rows[0]!.n > 0;
        await waitUntil(writing, 'the run has written in its transaction', 60_000, 20);
      } else {
        await waitUntil(async () => (await api('GET', `/api/big/alerts/${alertId}`)).status === 'running', 'the run is under way', 60_000, 20);
      }
      const killedAt = Date.now();
      served.run.child.kill('SIGKILL');
      expect((await served.run.finished).signal).toBe('SIGKILL');
      served = undefined;
      if (onPostgres) {
        // Nothing of the killed run was recorded (embedded, the run's start time below says so).
        expect(await counts(db!)).toEqual({ runs: 0, cases: 0, matches: 0, events: 0, distinct_events: 0, deliveries: 0 });
        // Its lease running out, as it does after the alert's time-out and a margin (embedded: the next start frees it).
        await db!.query("UPDATE alerts SET run_locked_until = now() - interval '1 second' WHERE id = $1", [alertId]);
      }

      // Started again, the process runs the alert (its run was asked for and never recorded) to its end.
      served = await serve(env);
      const again = await signInOver(served.base, 'admin', ADMIN_PASSWORD);
      const runs = async () => {
        const response = await fetch(`${served!.base}/api/big/alerts/${alertId}/runs`, { headers: { cookie: again.cookie! } });
        return ((await response.json()) as { items: Record<string, unknown>[] }).items;
      };
      await waitUntil(async () => (await runs()).length > 0, 'the run is done again', 120_000);
      // One run, started after the kill: the killed one recorded nothing, not even its run.
      const [run, ...others] = await runs();
      expect(others).toEqual([]);
      expect(run).toMatchObject({ outcome: 'ok', rowsRead: ACCOUNTS, matchesNew: ACCOUNTS, casesOpened: ACCOUNTS, eventsEmitted: ACCOUNTS });
      expect(new Date(run!.startedAt as string).getTime()).toBeGreaterThan(killedAt);
      expect((await stopCli(served.run)).code).toBe(0);
      served = undefined;

      db ??= await reopen();
      expect(await counts(db)).toEqual({ runs: 1, cases: ACCOUNTS, matches: ACCOUNTS, events: ACCOUNTS, distinct_events: ACCOUNTS, deliveries: ACCOUNTS });
    } finally {
      if (served) await stopCli(served.run, 'SIGKILL');
      await db?.close();
      await testDb.dispose().catch(() => undefined);
      if (onPostgres) removeDir(graphDir);
    }
  }, 240_000);
});
