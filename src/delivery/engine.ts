import type { SettingsStore } from '../settings/settings-store.js';
import type { WebhookSettings } from '../settings/webhook-settings.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ReceiverPolicy } from '../network/receiver-policy.js';
import type { Keyring } from '../secrets/keyring.js';
import { cleanupDeliveries } from './cleanup.js';
import { RecurringTask } from './schedule.js';
import { DeliverySender } from './sender.js';
import { DueAnnouncer, listenForDueDeliveries } from './wake-up.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker, type WorkerOptions } from './worker.js';

/** `deliveryFrequency: immediate`: how often a worker looks for due deliveries anyway (a wake-up may be lost). */
export const DEFAULT_SWEEP_MS = 1_000;

export interface DeliveryEngine {
  readonly worker: DeliveryWorker;
  readonly delivery: RecurringTask;
  readonly cleanup: RecurringTask;
  /** Stops the schedules, finishes in-flight attempts, releases what was claimed but not attempted. */
  stop(): Promise<void>;
}

/**
 * The delivery side of a process: the worker, driven by `deliveryFrequency`, and the cleanup, driven by
 * `cleanupFrequency`. Both follow the stored settings as they change, and stop while webhooks are disabled.
 * With `scheduled` false (ROLE=api) nothing runs on a schedule; the worker still serves pings. `immediate` (our
 * extension) fires the worker whenever a commit made deliveries due, in any process (wake-up.ts), and every
 * `sweepMs`; on PostgreSQL every process, ROLE=api included, announces its own such commits to the others.
 */
export function startDeliveryEngine(options: {
  db: Database;
  settings: SettingsStore;
  logger: Logger;
  scheduled: boolean;
  /** Opens the webhooks' sealed secrets for signing. */
  keyring: Keyring;
  worker?: Partial<WorkerOptions>;
  /** Which receiver addresses deliveries and pings may reach (RECEIVER_*); the default policy when unset. */
  receiverPolicy?: ReceiverPolicy;
  /** The process's metrics, counted into by the worker (GET /metrics). */
  metrics?: Metrics;
  /** `immediate`: the sweep's interval (DELIVERY_SWEEP_MS; tests make it huge); default DEFAULT_SWEEP_MS. */
  sweepMs?: number | undefined;
}): DeliveryEngine {
  const { db, settings, logger } = options;
  const sender = new DeliverySender(options.receiverPolicy === undefined ? {} : { receiverPolicy: options.receiverPolicy });
  const worker = new DeliveryWorker(db, settings, sender, options.keyring, logger, { ...DEFAULT_WORKER_OPTIONS, ...options.worker }, options.metrics);
  // A firing never waits for the drain: it starts one, or has the one under way claim again (see DeliveryWorker.tick).
  // So wake-ups coalesce: however many come while a claim runs, the drain claims once more after it, and one that
  // comes while the drain has no room for a claim only lets it claim as soon as it has.
  const delivery = new RecurringTask('delivery', async () => worker.tick(), logger, {
    listen: (wake) => listenForDueDeliveries(db, wake),
    sweepMs: options.sweepMs ?? DEFAULT_SWEEP_MS,
  });
  // PGlite needs no announcing: its one process hears its own signal (listenForDueDeliveries).
  const announcer = db.kind === 'postgres' ? new DueAnnouncer(db, logger) : undefined;
  const cleanup = new RecurringTask(
    'cleanup',
    async () => {
      const startedAt = Date.now();
      const result = await cleanupDeliveries(db, settings.webhooks);
      if (result.ran) logger.info({ sent: result.sent, failed: result.failed, alertRuns: result.runs, auditEntries: result.audit, durationMs: Date.now() - startedAt }, 'old deliveries removed');
    },
    logger,
  );
  const follow = (s: Readonly<WebhookSettings>) => {
    const deliveryPattern = s.enabled ? s.deliveryFrequency : 'none';
    delivery.set(deliveryPattern);
    // Turning the schedule off also stops a drain under way from claiming (within one claim), not only later firings.
    if (deliveryPattern === 'none') {
      worker.pause().catch((err: unknown) => logger.error({ err }, 'could not pause delivery'));
    } else {
      worker.resume();
    }
    cleanup.set(s.enabled ? s.cleanupFrequency : 'none');
  };
  const unsubscribe = options.scheduled ? settings.onChange(follow) : () => {};
  if (options.scheduled) follow(settings.webhooks);

  return {
    worker,
    delivery,
    cleanup,
    async stop() {
      unsubscribe();
      await Promise.all([delivery.stop(), cleanup.stop(), worker.stop(), announcer?.stop()]);
      await sender.close();
    },
  };
}
