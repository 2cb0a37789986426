import type { SettingsStore } from '../config/settings-store.js';
import type { WebhookSettings } from '../config/webhook-settings.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ReceiverPolicy } from '../network/receiver-policy.js';
import type { Keyring } from '../secrets/keyring.js';
import { cleanupDeliveries } from './cleanup.js';
import { RecurringTask } from './schedule.js';
import { DeliverySender } from './sender.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker, type WorkerOptions } from './worker.js';

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
 * With `scheduled` false (ROLE=api) nothing runs on a schedule; the worker still serves pings.
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
}): DeliveryEngine {
  const { db, settings, logger } = options;
  const sender = new DeliverySender(options.receiverPolicy === undefined ? {} : { receiverPolicy: options.receiverPolicy });
  const worker = new DeliveryWorker(db, settings, sender, options.keyring, logger, { ...DEFAULT_WORKER_OPTIONS, ...options.worker }, options.metrics);
  // A firing never waits for the drain: it starts one, or has the one under way claim again (see DeliveryWorker.tick).
  const delivery = new RecurringTask('delivery', async () => worker.tick(), logger);
  const cleanup = new RecurringTask(
    'cleanup',
    async () => {
      const startedAt = Date.now();
      const result = await cleanupDeliveries(db, settings.webhooks);
      if (result.ran) logger.info({ sent: result.sent, failed: result.failed, durationMs: Date.now() - startedAt }, 'old deliveries removed');
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
      await Promise.all([delivery.stop(), cleanup.stop(), worker.stop()]);
      await sender.close();
    },
  };
}
