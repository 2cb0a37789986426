import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { tablesWrittenBy } from '../../src/db/embedded-autovacuum.js';
import { waitUntil } from '../support/processes.js';
import { useTestDatabase } from '../support/test-service.js';

// The one seam both databases sit behind: the same rows, the same errors, the same transactions.
describe('the database seam', () => {
  const t = useTestDatabase();

  it('gives rows the same types on both databases', async () => {
    const { rows } = await t.db.query<Record<string, unknown>>(
      `SELECT 9007199254740::bigint AS big, 2.5::numeric AS num, '2026-01-02T03:04:05.678Z'::timestamptz AS at,
              '{"a":[1,"x"]}'::jsonb AS doc, ARRAY['b','a'] AS names, true AS flag, NULL::text AS nothing`,
    );
    expect(rows[0]).toEqual({ big: 9007199254740, num: 2.5, at: new Date('2026-01-02T03:04:05.678Z'), doc: { a: [1, 'x'] }, names: ['b', 'a'], flag: true, nothing: null });
    expect(rows[0]!.at).toBeInstanceOf(Date);
  });

  it("carries a failed statement's SQLSTATE, constraint and message to the caller", async () => {
    await t.db.query(`INSERT INTO data_sources (key, name) VALUES ('seam0001', 'Seam')`);
    const err = await t.db.query(`INSERT INTO data_sources (key, name) VALUES ('seam0001', 'Again')`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '23505', constraint: 'data_sources_pkey' });
    expect((err as Error).message).toMatch(/duplicate key/);
    // The session is usable after an error.
    expect((await t.db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('rolls a transaction back when its work throws, and commits it when it resolves', async () => {
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO data_sources (key, name) VALUES ('seam0002', 'Rolled back')`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await t.db.transaction(async (tx) => tx.query(`INSERT INTO data_sources (key, name) VALUES ('seam0003', 'Kept')`));
    const { rows } = await t.db.query<{ key: string }>(`SELECT key FROM data_sources WHERE key LIKE 'seam000%' ORDER BY key`);
    expect(rows.map((r) => r.key)).toEqual(['seam0001', 'seam0003']);
  });

  it('keeps statements outside a transaction from running inside it', async () => {
    let inside!: () => void;
    const held = new Promise<void>((resolve) => (inside = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tx = t.db.transaction(async (q) => {
      await q.query(`INSERT INTO data_sources (key, name) VALUES ('seam0004', 'Not yet')`);
      inside();
      await gate;
      throw new Error('abandon');
    });
    await held;
    // On PostgreSQL another connection does not see the uncommitted row; on PGlite the statement waits its turn.
    const outside = t.db.query<{ n: number }>(`SELECT count(*) AS n FROM data_sources WHERE key = 'seam0004'`);
    release();
    await expect(tx).rejects.toThrow('abandon');
    expect((await outside).rows[0]!.n).toBe(0);
  });

  // PostgreSQL only: PGlite's session lives in this process and cannot be cut from outside.
  if (process.env.TEST_DB === 'postgres') it('PostgreSQL: a connection lost in the middle of a transaction fails that transaction, and nothing else', async () => {
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      const outcome = await t.db
        .transaction(async (tx) => {
          const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          // Cut while this transaction's connection sits between two statements: pg then emits 'error' on a client
          // that is checked out of the pool, which ended the process when nothing listened for it.
          await other.query('SELECT pg_terminate_backend($1)', [pid]);
          await waitUntil(async () => (await other.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0, 'the backend is gone', 5_000, 20);
          await new Promise((resolve) => setTimeout(resolve, 100));
          await tx.query('SELECT 1');
          return 'committed';
        })
        .catch((err: unknown) => err);
      expect(outcome).toBeInstanceOf(Error);
      // The lost connection is not handed out again: more transactions than the pool has connections all work.
      for (let i = 0; i < 12; i++) expect((await t.db.transaction((tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
      expect((await t.db.health(3_000)).ok).toBe(true);
    } finally {
      await other.end();
    }
  });

  if (process.env.TEST_DB === 'postgres') it('PostgreSQL: a LISTEN whose connection is lost comes back by itself, says so, and hears NOTIFYs again', async () => {
    const heard: string[] = [];
    let reconnects = 0;
    const stop = await t.db.listen('seam_channel', (payload) => heard.push(payload), () => reconnects++);
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      const listener = async () =>
        (await other.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN "seam_channel"'`)).rows.map((r) => r.pid);
      await other.query(`SELECT pg_notify('seam_channel', 'before')`);
      await waitUntil(() => heard.includes('before'), 'the first NOTIFY is heard', 5_000, 20);
      for (let round = 1; round <= 2; round++) {
        const [pid] = await listener();
        expect(pid).toBeDefined();
        await other.query('SELECT pg_terminate_backend($1)', [pid]);
        await waitUntil(() => reconnects === round, `the listener is back (round ${round})`, 10_000, 20);
        expect(await listener()).not.toContain(pid);
        await other.query(`SELECT pg_notify('seam_channel', $1)`, [`after ${round}`]);
        await waitUntil(() => heard.includes(`after ${round}`), `a NOTIFY after reconnecting is heard (round ${round})`, 5_000, 20);
      }
      await stop();
      expect(await listener()).toEqual([]);
    } finally {
      await other.end();
    }
  });

  // PGlite only: PostgreSQL runs its own autovacuum, on its own schedule.
  if (process.env.TEST_DB === 'pglite') it('embedded: analyses a table once enough of it changed, as autovacuum would', async () => {
    const estimate = async () =>
      (await t.db.query<{ reltuples: number }>(`SELECT reltuples::int AS reltuples FROM pg_class WHERE oid = 'webhook_events'::regclass`)).rows[0]!.reltuples;
    expect(await estimate()).toBeLessThan(500);
    await t.db.query(`INSERT INTO webhook_events (event_type, payload) SELECT 'newCase', '{}' FROM generate_series(1, 500)`);
    await waitUntil(async () => (await estimate()) === 500, 'webhook_events is analysed', 15_000);
  });
});

// PGlite only: the embedded database opens on a thread of its own, and must say so when it cannot.
if (process.env.TEST_DB === 'pglite') {
  describe('the embedded database failing to open', () => {
    it('names the directory, and leaves no lock behind', async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-bad-'));
      try {
        writeFileSync(path.join(dataDir, 'pgdata'), 'not a directory');
        await expect(createDatabase({ dataDir })).rejects.toThrow(`cannot open the embedded database in ${path.join(dataDir, 'pgdata')}`);
        expect(existsSync(path.join(dataDir, '.lock'))).toBe(false);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}

describe('which tables a statement writes (the embedded autovacuum counts per table)', () => {
  it.each([
    ['INSERT INTO cases AS c (alert_id) SELECT 1 ON CONFLICT (alert_id, hash) DO UPDATE SET match_count = 1', ['cases']],
    ['WITH e AS (INSERT INTO webhook_events (payload) SELECT 1 RETURNING id) INSERT INTO webhook_deliveries SELECT * FROM e', ['webhook_events', 'webhook_deliveries']],
    ['WITH due AS (SELECT id FROM webhook_deliveries FOR UPDATE SKIP LOCKED) UPDATE webhook_deliveries d SET attempts = 1', ['webhook_deliveries']],
    ['SELECT * FROM alerts WHERE id = $1 FOR UPDATE OF alerts NOWAIT', []],
    ['delete from sessions where expires_at < now()', ['sessions']],
  ])('%s', (sql, tables) => {
    expect(tablesWrittenBy(sql)).toEqual(tables);
  });
});
