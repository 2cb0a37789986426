import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { readProcessConfig, type ProcessConfig } from '../env.js';
import { DataDirLockedError } from '../db/data-dir-lock.js';
import { createDatabase, type Database } from '../db/database.js';
import { pendingMigrations } from '../db/migration-status.js';
import { createLogger } from '../logger.js';
import { explainStartupFailure, OperatorError } from './startup-failures.js';

/**
 * Opens the database for an admin command (reset-password, webhooks, deliveries, config), runs `work` on it and
 * closes it. The commands use the same functions as the API, on the database directly, so they work when no
 * service runs or nobody can sign in. On PostgreSQL they run beside running services; the embedded database serves
 * one process, so while a service holds DATA_DIR they refuse, naming `apiInstead`, the API call that does the same
 * (undefined when none does: the service must be stopped).
 */
export async function withAdminDatabase<T>(apiInstead: string | undefined, work: (db: Database, config: ProcessConfig) => Promise<T>): Promise<T> {
  const config = readProcessConfig();
  if (!config.databaseUrl && !existsSync(config.dataDir)) {
    throw new OperatorError(
      `DATA_DIR ${config.dataDir} does not exist, so there is no database to work on: set DATA_DIR (or DATABASE_URL) to where the service keeps its data.`,
    );
  }
  let db: Database;
  try {
    // Problems (a lost connection) go to stderr, never into what the command prints on stdout.
    db = await createDatabase({ databaseUrl: config.databaseUrl, poolSize: 2, dataDir: config.dataDir, logger: createLogger('error', pino.destination(2)) });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      throw new OperatorError(
        `the embedded database in ${err.dataDir} is held by a running service (process ${err.owner.pid} on ${err.owner.hostname}), ` +
          `and it serves one process at a time. ${apiInstead === undefined ? 'Stop' : `Use that service's API instead (${apiInstead}), or stop`} the service and run this command again.`,
      );
    }
    throw explainStartupFailure(err, config);
  }
  try {
    const pending = await pendingMigrations(db).catch((err: unknown) => {
      throw explainStartupFailure(err, config);
    });
    if (pending.length > 0) {
      throw new OperatorError(`the database lacks ${pending.length} migration(s) of this version: run "alert-webhooks migrate" (or start the service) first.`);
    }
    return await work(db, config);
  } finally {
    await db.close();
  }
}
