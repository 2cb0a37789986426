import { describeConfinement, hostConfinement } from './graph/embedded/confinement.js';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunDependencies } from './alerts/alert-run.js';
import { RecordedMatches } from './alerts/recorded-matches.js';
import { AlertScheduler } from './alerts/alert-scheduler.js';
import { buildApp } from './app.js';
import { bootstrapAdmin } from './auth/bootstrap.js';
import { initialPasswordPath, writeInitialPassword } from './auth/initial-password.js';
import type { ProcessConfig } from './env.js';
import { SettingsStore } from './settings/settings-store.js';
import { createDatabase, type Database } from './db/database.js';
import { restrictNewFiles } from './db/data-dir-modes.js';
import { migrate } from './db/migrate.js';
import { startDeliveryEngine, type DeliveryEngine } from './delivery/engine.js';
import { schedulesProblem } from './delivery/schedule-health.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { readBacklog } from './outbox/backlog.js';
import { releaseOrphanedClaims } from './outbox/claims.js';
import { onEventsRecorded } from './outbox/enqueue.js';
import { loadKeyring, type Keyring } from './secrets/keyring.js';
import { GraphRegistry } from './sources/graph-registry.js';
import { requireSealingKeys, sealPlainSecrets } from './webhooks/secret-sealing.js';
import { existingWebhookIds } from './webhooks/webhooks.js';

// How long /health/ready and a metrics scrape wait for each graph's round trip.
const GRAPH_PING_TIMEOUT_MS = 2_000;

export interface Service {
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly settings: SettingsStore;
  readonly engine: DeliveryEngine;
  /** The keys webhook secrets are sealed with (SECRETS_KEY, SECRETS_KEY_FILE, or the embedded DATA_DIR/secrets.key). */
  readonly keyring: Keyring;
  /** The process's Prometheus metrics (GET /metrics on the API port, or on METRICS_PORT for ROLE=worker). */
  readonly metrics: Metrics;
  /** The graphs of the data sources, opened by this process when first needed. */
  readonly graphs: GraphRegistry;
  /** What running an alert needs in this process (the runner, its claims' owner name). */
  readonly alertRuns: RunDependencies;
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
  // Each phase of the start is logged with its duration (at info), so a start that is slow says where it waited: a
  // restart with embedded graphs and alerts once did not answer within 120 s on a loaded machine.
  const startedAt = performance.now();
  const phase = async <T>(name: string, work: () => Promise<T> | T): Promise<T> => {
    const began = performance.now();
    const value = await work();
    logger.info({ phase: name, durationMs: Math.round(performance.now() - began) }, `start: ${name}`);
    return value;
  };
  // Whatever this process writes under DATA_DIR (the embedded database, embedded graphs) is its owner's alone.
  restrictNewFiles();
  const databaseKind = options.db?.kind ?? (config.databaseUrl ? 'postgres' : 'pglite');
  const loadKeys = () => loadKeyring({ ...config, databaseKind });
  // On PostgreSQL the key comes first: without one the process stops here with the one-line message
  // (SecretsKeyError), before it opens a connection. The embedded key file lives in DATA_DIR, which opening the
  // database creates (with a clear message when it cannot) and locks against a second process.
  let keys = databaseKind === 'postgres' ? await phase('secrets key', loadKeys) : undefined;
  const ownsDb = !options.db;
  const db = options.db ?? (await phase('database opened', () => createDatabase({ databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize, dataDir: config.dataDir, logger })));
  try {
    keys ??= await phase('secrets key', loadKeys);
    const { keyring, origin, warnings } = keys;
    // Never logged: the key itself (a KeyObject, which prints nothing anyway).
    logger.info({ keyId: keyring.current.id, origin, previousKeyId: keyring.previous?.id }, 'secrets key loaded');
    for (const warning of warnings) logger.warn(warning);
    logger.info({ receiverPolicy: config.receiverPolicy.describe() }, 'receiver policy');
    // Which bound the operating system puts on the embedded graphs' processes (confinement.ts): loud when none.
    const confinement = hostConfinement();
    if (confinement.kind === 'landlock') logger.info({ graphConfinement: `landlock-abi-${confinement.abi}` }, describeConfinement(confinement));
    else logger.warn({ graphConfinement: 'none' }, describeConfinement(confinement));
    const applied = await phase('migrations', () => migrate(db, (m) => logger.info({ migration: `${m.version}_${m.name}` }, 'migration applied')));
    if (applied.length) logger.info({ count: applied.length }, 'database migrated');
    // Before anything can sign or store a secret: a process that could not open what is sealed stops here, in one
    // line, before it seals anything under its key; then the plain secrets of an older version are sealed (nothing
    // to do after the first start with a key).
    const sealed = await phase('webhook secrets checked', async () => {
      await requireSealingKeys(db, keyring, {
        origin,
        advice: 'Start it with the key that sealed them, or with that key as SECRETS_KEY_PREVIOUS and then run "alert-webhooks rekey" (docs/operations.md)',
      });
      return sealPlainSecrets(db, keyring);
    });
    if (sealed) logger.info({ webhooks: sealed, keyId: keyring.current.id }, 'webhook secrets stored in clear were sealed');

    // By a process that serves the API only: the generated password's file is then where the API runs (its volume,
    // its pod), not in a worker's, where no one signs in.
    if (config.role !== 'worker') {
      const admin = await phase('first admin', () => bootstrapAdmin(db, { email: config.adminEmail, password: config.adminPassword }));
      if (admin.generatedPassword) {
        (options.announce ?? console.log)(announceInitialPassword(config, admin.generatedPassword, logger));
      } else if (admin.created) {
        logger.info({ email: config.adminEmail }, 'created the first admin with ADMIN_PASSWORD');
      }
    }

    // The embedded database serves one process at a time (its data directory's lock): a claim found in it at start
    // is a previous process's that ended without giving it back (killed). Its deliveries go out now, not at the end
    // of its lease (95 s at the default time-out there, see CLAIM_DEPTH in delivery/claim-depth.ts).
    if (db.kind === 'pglite') {
      await phase('claims of a previous process released', async () => {
        // The same for alert runs: a run claimed by the killed process is due again (it recorded nothing).
        await db.query('UPDATE alerts SET run_owner = NULL, run_locked_until = NULL WHERE run_locked_until IS NOT NULL');
        const released = await releaseOrphanedClaims(db);
        if (released) logger.info({ deliveries: released }, 'claims left by a previous process released: those deliveries are due again');
      });
    }

    const settings = await phase('settings', async () => {
      const store = await SettingsStore.open(db, logger);
      await store.watch();
      return store;
    });
    const graphs = new GraphRegistry({ dataDir: config.dataDir, bufferPoolBytes: config.graphBufferPoolBytes, keyring, logger, receiverPolicy: config.receiverPolicy });
    const metrics = new Metrics({
      backlog: () => readBacklog(db),
      graphs: () => graphs.health(db, GRAPH_PING_TIMEOUT_MS),
      existingWebhooks: (ids) => existingWebhookIds(db, ids),
    });
    const stopCountingEvents = onEventsRecorded((eventType) => metrics.eventsRecorded(eventType));
    const engine = startDeliveryEngine({
      db,
      settings,
      logger,
      scheduled: config.role !== 'api',
      keyring,
      worker: { concurrency: config.deliveryConcurrency, perWebhookConcurrency: config.deliveryConcurrencyPerWebhook, leaseMs: config.deliveryLeaseMs },
      receiverPolicy: config.receiverPolicy,
      metrics,
      sweepMs: config.deliverySweepMs,
    });
    // Readiness asks whether the schedules run only where this process runs them.
    const schedules = config.role === 'api' ? undefined : () => schedulesProblem(engine, settings.webhooks);
    const alertRuns: RunDependencies = {
      db,
      graphs,
      publicBaseUrl: config.publicBaseUrl,
      limits: config.alertLimits,
      logger,
      owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      recorded: new RecordedMatches(),
      onRun: (run) => metrics.alertRun(run.outcome, run.durationMs / 1000, run.matchesNew),
    };
    // Alerts run where the workers run: a ROLE=api process only answers the API.
    const alertScheduler = config.role === 'api' ? undefined : new AlertScheduler(alertRuns);
    const app = await phase('API built', async () => {
      const built = await buildApp({ db, settings, config, logger, worker: engine.worker, keyring, schedules, metrics, graphs, alertRuns, kickAlertRuns: alertScheduler && (() => alertScheduler.kick()) });
      await built.ready();
      return built;
    });
    // The embedded graphs are opened by the alert schedule's first look for due alerts, after the start (each
    // opening is logged with its duration: GraphRegistry), and by the first request that needs one.
    alertScheduler?.start();
    logger.info({ durationMs: Math.round(performance.now() - startedAt) }, 'start: service started');

    let closed = false;
    return {
      app,
      db,
      settings,
      engine,
      keyring,
      metrics,
      graphs,
      alertRuns,
      async close() {
        if (closed) return;
        closed = true;
        // Stop taking requests, then stop claiming and let attempts in flight finish, then let go of the database.
        await app.close();
        await alertScheduler?.stop();
        await engine.stop();
        await settings.close();
        await graphs.close();
        stopCountingEvents();
        if (ownsDb) await db.close();
      },
    };
  } catch (err) {
    if (ownsDb) await db.close();
    throw err;
  }
}

/**
 * Puts the first admin's generated password in DATA_DIR (auth/initial-password.ts) and says where in one line, which
 * is all that reaches stdout and the log stream. Where DATA_DIR cannot be written (a read-only root file system
 * without a volume), the password is printed once instead, as the only way left to sign in, with a warning.
 */
function announceInitialPassword(config: ProcessConfig, password: string, logger: Logger): string {
  const file = initialPasswordPath(config.dataDir);
  try {
    writeInitialPassword(file, password);
    return `Created the first admin: username "admin", email ${config.adminEmail}; its generated password is in ${file} (mode 0600), removed at its first change.`;
  } catch (err) {
    logger.warn({ file, error: (err as Error).message }, 'could not write the first admin\'s password to DATA_DIR: printing it once instead');
    return `Created the first admin: username "admin", email ${config.adminEmail}, password ${password} (shown once; sign in and change it).`;
  }
}
