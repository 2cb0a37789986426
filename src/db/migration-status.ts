import type { Queryable } from './database.js';
import { loadMigrations, type Migration } from './migrate.js';

/**
 * The migrations this build ships that the database has not applied (empty: up to date). The database may have
 * more than these (a newer build migrated it): that is not this process's concern. A database that has never been
 * migrated has no `schema_migrations` table: every migration is pending.
 */
export async function pendingMigrations(db: Queryable): Promise<Migration[]> {
  const { rows: table } = await db.query<{ present: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!table[0]?.present) return shippedMigrations();
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
  const applied = new Set(rows.map((r) => r.version));
  return shippedMigrations().filter((m) => !applied.has(m.version));
}

// Read once: what a build ships does not change while it runs, and readiness probes come every few seconds.
let shipped: Migration[] | undefined;
function shippedMigrations(): Migration[] {
  return (shipped ??= loadMigrations());
}
