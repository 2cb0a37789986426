#!/usr/bin/env node
import { ConfigError, readProcessConfig, redactUrl } from './config/env.js';
import { DataDirLockedError } from './db/data-dir-lock.js';
import { createDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { DemoError, runDemo } from './demo.js';
import { createLogger } from './logger.js';
import { startService } from './service.js';

const USAGE = `Usage: alert-webhooks <command>

Commands:
  serve     run the service (API and delivery worker, as ROLE says)
  migrate   apply pending database migrations and exit
  demo      a guided end-to-end run: throwaway database, a receiver, signed deliveries (about 10 s)

Environment: DATABASE_URL (postgres://…; unset = embedded database in DATA_DIR, default ./data),
PORT (3000), HOST, PUBLIC_BASE_URL, ADMIN_EMAIL, ADMIN_PASSWORD, LOG_LEVEL, ROLE (all|api|worker).`;

async function serve(): Promise<void> {
  const config = readProcessConfig();
  const logger = createLogger(config.logLevel);
  const service = await startService({ config, logger });
  const address = config.role === 'worker' ? undefined : await service.app.listen({ port: config.port, host: config.host });
  logger.info(
    { address, database: config.databaseUrl ? redactUrl(config.databaseUrl) : `embedded (${config.dataDir})`, role: config.role },
    config.role === 'worker' ? 'alert-webhooks worker is running' : 'alert-webhooks is serving',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight work');
    await service.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function migrateOnly(): Promise<void> {
  const config = readProcessConfig();
  const db = await createDatabase({ databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize, dataDir: config.dataDir, logger: createLogger(config.logLevel) });
  try {
    const applied = await migrate(db, (m) => console.log(`applied ${String(m.version).padStart(4, '0')}_${m.name}`));
    console.log(applied.length ? `${applied.length} migration(s) applied` : 'the database is up to date');
  } finally {
    await db.close();
  }
}

const commands: Record<string, () => Promise<void>> = { serve, migrate: migrateOnly, demo: runDemo };

const name = process.argv[2] ?? 'serve';
const command = commands[name];
if (!command || name === '--help' || name === 'help') {
  console.log(USAGE);
  process.exit(command || name === '--help' || name === 'help' ? 0 : 2);
}
command().catch((err: unknown) => {
  // Errors that are the operator's to fix get their message alone; anything else its stack too.
  if (err instanceof DemoError) {
    // The demo has said what failed, step by step.
  } else if (err instanceof ConfigError || err instanceof DataDirLockedError) console.error(`alert-webhooks: ${err.message}`);
  else console.error(`alert-webhooks ${name}: failed:`, err);
  process.exit(1);
});
