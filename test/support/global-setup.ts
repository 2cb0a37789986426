import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDatabase, dropPgDatabase, pgUrlFor, removeDir } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated template each test file clones: a PGlite DATA_DIR, or a PostgreSQL database name. */
    dbTemplate: { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; database: string };
  }
}

/** Migrates one template database per project, once per run: cloning it is far cheaper than migrating per file. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // test/package/ makes its own empty databases: the processes it starts migrate them.
  if (project.name === 'package') return async () => {};
  if (project.name === 'postgres') {
    const database = `aw_template_${process.pid}`;
    await createPgDatabase(database);
    const db = await createDatabase({ databaseUrl: pgUrlFor(database), dataDir: '' });
    await migrate(db);
    await db.close();
    project.provide('dbTemplate', { kind: 'postgres', database });
    return async () => dropPgDatabase(database);
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-template-'));
  const db = await createDatabase({ dataDir });
  await migrate(db);
  await db.close();
  project.provide('dbTemplate', { kind: 'pglite', dataDir });
  return async () => removeDir(dataDir);
}
