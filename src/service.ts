import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { bootstrapAdmin } from './auth/bootstrap.js';
import type { ProcessConfig } from './config/env.js';
import { SettingsStore } from './config/settings-store.js';
import { createDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { startDeliveryEngine, type DeliveryEngine } from './delivery/engine.js';
import type { Logger } from './logger.js';

export interface Service {
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly settings: SettingsStore;
  readonly engine: DeliveryEngine;
  /** Stops taking requests and work, lets what is in flight finish, closes the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  config: ProcessConfig;
  logger: Logger;
  /** An open database to use (tests); otherwise one is opened from the config and closed with the service. */
  db?: Database;
  /** Printed once when the bootstrap admin's password was generated. */
  announce?: (line: string) => void;
}

/**
 * Everything a process runs: database and migrations, bootstrap admin, settings, the API, and the delivery
 * engine (scheduled unless ROLE=api; the caller listens for HTTP unless ROLE=worker).
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config, logger } = options;
  const ownsDb = !options.db;
  const db = options.db ?? (await createDatabase({ databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize, dataDir: config.dataDir, logger }));
  try {
    const applied = await migrate(db, (m) => logger.info({ migration: `${m.version}_${m.name}` }, 'migration applied'));
    if (applied.length) logger.info({ count: applied.length }, 'database migrated');

    const admin = await bootstrapAdmin(db, { email: config.adminEmail, password: config.adminPassword });
    if (admin.generatedPassword) {
      (options.announce ?? console.log)(
        `Created the first admin: username "admin", email ${config.adminEmail}, password ${admin.generatedPassword}\n` +
          'This password is shown once. Sign in and change it, or set ADMIN_PASSWORD on an empty database.',
      );
    } else if (admin.created) {
      logger.info({ email: config.adminEmail }, 'created the first admin with ADMIN_PASSWORD');
    }

    const settings = await SettingsStore.open(db, logger);
    await settings.watch();
    const engine = startDeliveryEngine({
      db,
      settings,
      logger,
      scheduled: config.role !== 'api',
      worker: { concurrency: config.deliveryConcurrency, perWebhookConcurrency: config.deliveryConcurrencyPerWebhook, leaseMs: config.deliveryLeaseMs },
    });
    const app = await buildApp({ db, settings, config, logger, worker: engine.worker });
    await app.ready();

    let closed = false;
    return {
      app,
      db,
      settings,
      engine,
      async close() {
        if (closed) return;
        closed = true;
        // Stop taking requests, then stop claiming and let attempts in flight finish, then let go of the database.
        await app.close();
        await engine.stop();
        await settings.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (err) {
    if (ownsDb) await db.close();
    throw err;
  }
}
