import { describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError } from '../../src/db/data-dir-lock.js';
import { createDatabase } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { createPgDatabase, dropPgDatabase } from '../support/databases.js';
import { runCli } from '../support/processes.js';
import { openTestDatabase, signIn, startTestService, useTestDatabase } from '../support/test-service.js';

describe('a restart on the same database', () => {
  const testDb = useTestDatabase();

  it('keeps users and settings', async () => {
    const first = await startTestService({ testDb });
    await first.admin.post('/api/admin/users', { username: 'kept', email: 'kept@example.com', password: 'kept-password' });
    await first.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: '*/10 * * * * *' });
    await first.service.close();

    // Reopen the database itself (for PGlite: the same DATA_DIR, from the files on disk).
    await testDb.db.close();
    testDb.db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });

    const second = await startTestService({ testDb });
    try {
      const kept = await signIn(second.app, 'kept', 'kept-password');
      expect((await kept.get('/api/auth/me')).body.email).toBe('kept@example.com');
      expect((await second.admin.get('/api/config')).body.webhooks.deliveryFrequency).toBe('*/10 * * * * *');
    } finally {
      await second.service.close();
    }
  });
});

describe('two processes on one database', () => {
  it('embedded: a second process on the same DATA_DIR stops with an error naming the holder; PostgreSQL: both migrate', async () => {
    const kind = process.env.TEST_DB;
    if (kind === 'pglite') {
      const testDb = await openTestDatabase();
      try {
        // In this process, a second opener is refused too.
        expect(() => acquireDataDirLock(testDb.dataDir!)).toThrow(DataDirLockedError);
        const { finished } = runCli(['migrate'], { DATA_DIR: testDb.dataDir! });
        const result = await finished;
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`DATA_DIR ${testDb.dataDir} is in use by process ${process.pid}`);
      } finally {
        await testDb.dispose();
      }
      // Once released, the directory opens again.
      return;
    }
    // PostgreSQL: a fresh, empty database; two real processes run `migrate` at the same moment.
    const name = `aw_test_migrate_${process.pid}`;
    const url = await createPgDatabase(name);
    try {
      const runs = [runCli(['migrate'], { DATABASE_URL: url }), runCli(['migrate'], { DATABASE_URL: url })];
      const results = await Promise.all(runs.map((r) => r.finished));
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      // Between them, every migration was applied exactly once.
      const outputs = results.map((r) => r.stdout).join('\n');
      for (const m of loadMigrations()) expect(outputs.split(`_${m.name}\n`).length - 1).toBe(1);
      const db = await createDatabase({ databaseUrl: url, dataDir: '' });
      try {
        const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
        expect(await migrate(db)).toEqual([]);
      } finally {
        await db.close();
      }
    } finally {
      await dropPgDatabase(name);
    }
  });

  it('embedded lock: a lock left by a dead process is taken over', async () => {
    const testDb = await openTestDatabase();
    const dataDir = testDb.dataDir;
    await testDb.db.close();
    if (dataDir) {
      const { writeFileSync } = await import('node:fs');
      const { hostname } = await import('node:os');
      // pid 2^22 + 1 is above Linux's pid_max default: no such process.
      writeFileSync(`${dataDir}/.lock`, JSON.stringify({ pid: 4194305, hostname: hostname(), startedAt: 'earlier' }));
      const lock = acquireDataDirLock(dataDir);
      expect(() => acquireDataDirLock(dataDir)).toThrow(/in use by process/);
      lock.release();
      const again = acquireDataDirLock(dataDir);
      again.release();
    } else {
      // PostgreSQL has no lock file: two services on one database are the supported way to scale.
      const other = await createDatabase({ databaseUrl: testDb.url, dataDir: '' });
      expect((await other.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
      await other.close();
    }
    testDb.db = await createDatabase({ databaseUrl: testDb.url, dataDir: dataDir ?? '' });
    await testDb.dispose();
  });
});
