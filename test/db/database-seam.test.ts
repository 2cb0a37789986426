import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { tablesWrittenBy } from '../../src/db/embedded-autovacuum.js';
import { waitUntil } from '../support/processes.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

// The one seam both databases sit behind: the same rows, the same errors, the same transactions.
describe('the database seam', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(async () => t?.dispose());

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
