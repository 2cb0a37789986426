import { readProcessConfig } from '../env.js';
import { createDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { explainStartupFailure } from './startup-failures.js';

/** `migrate`: applies the migrations the database lacks, under the same advisory lock as a starting service. */
export async function migrateOnly(print: (line: string) => void = console.log): Promise<void> {
  const config = readProcessConfig();
  try {
    const db = await createDatabase({ databaseUrl: config.databaseUrl, poolSize: 1, dataDir: config.dataDir, logger: createLogger('error') });
    try {
      const applied = await migrate(db, (m) => print(`applied ${String(m.version).padStart(4, '0')}_${m.name}`));
      print(applied.length ? `${applied.length} migration(s) applied` : 'the database is up to date');
    } finally {
      await db.close();
    }
  } catch (err) {
    throw explainStartupFailure(err, config);
  }
}
