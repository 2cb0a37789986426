import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AdvisoryLock } from './advisory-locks.js';
import type { Database } from './database.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const MIGRATION_LOCK_KEY = AdvisoryLock.migrations;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(dir + file, 'utf8'),
    }));
}

/**
 * Applies the migrations not applied yet, each in its own transaction, under a session advisory lock:
 * two processes starting at once take turns, and the second finds nothing left to do.
 */
export async function migrate(db: Database, onApplied: (m: Migration) => void = () => {}): Promise<Migration[]> {
  const migrations = loadMigrations();
  return db.withConnection(async (conn) => {
    await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await conn.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await conn.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      const done: Migration[] = [];
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await conn.query('BEGIN');
        try {
          await conn.query(migration.sql);
          await conn.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await conn.query('COMMIT');
        } catch (err) {
          await conn.query('ROLLBACK');
          throw new Error(`migration ${migration.version}_${migration.name} failed: ${(err as Error).message}`, { cause: err });
        }
        done.push(migration);
        onApplied(migration);
      }
      return done;
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  });
}
