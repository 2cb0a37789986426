import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** Where the suite's PostgreSQL lives; the per-file databases are created on it. */
export const TEST_PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function pgUrlFor(database: string): string {
  const url = new URL(TEST_PG_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withMaintenanceClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createPgDatabase(name: string, template?: string): Promise<string> {
  await withMaintenanceClient(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}${template ? ` TEMPLATE ${pg.escapeIdentifier(template)}` : ''}`);
  });
  return pgUrlFor(name);
}

export async function dropPgDatabase(name: string): Promise<void> {
  await withMaintenanceClient((client) => client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
}

/** A copy of the migrated PGlite template: a DATA_DIR ready to open. */
export function copyPgliteTemplate(templateDataDir: string): string {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-test-'));
  cpSync(path.join(templateDataDir, 'pgdata'), path.join(dataDir, 'pgdata'), { recursive: true });
  return dataDir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
