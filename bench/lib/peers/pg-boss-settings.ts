/**
 * pg-boss's configuration for throughput, as issue 30 sets it: each worker fetches (and locks) up to 2,000 jobs in one
 * statement and completes the whole batch in one more, and several workers (each its own fetch loop, `work()` called
 * that many times in one process) keep sending while another fetches or completes. The sends themselves are bounded
 * by the service's and the ceiling's 64 connections (one undici Pool; the rest of a batch queues there).
 */
export const PG_BOSS_SETTINGS = {
  batchSize: 2_000,
  workers: 4,
  // Requests in flight, as the service's worker and the ceiling client have.
  connections: 64,
  // A fetch loop that found nothing waits this long (pg-boss's least); with a backlog it fetches again at once.
  pollingIntervalSeconds: 0.5,
  // Its pool: pg-boss's default.
  max: 10,
  schema: 'pgboss',
  // No cron here: no schedules are used.
  schedule: false,
};

/** The one queue. */
export const PG_BOSS_QUEUE = 'deliver';
