/**
 * graphile-worker's configuration as its performance page (https://worker.graphile.org/docs/performance) sets it
 * for its throughput figures: a pool one larger than the concurrency, a local queue of 500, completions and
 * failures batched with a delay of 0. The concurrency is the service's: 64 requests in flight, as the service's
 * worker and the ceiling client have (the page's 24 is for jobs that do no I/O).
 */
export const GRAPHILE_PRESET = {
  concurrentJobs: 64,
  // The docs' concurrency + 1: with the local queue most jobs need no connection of their own, but a pool
  // smaller than the concurrency is not what they recommend.
  maxPoolSize: 65,
  // Jobs fetched (and locked) 500 at a time and handed out locally, rather than one query per job. Measured here
  // (20,000 jobs, a busy machine, one sitting): size 500 1,722/s, 65 (concurrency + 1) 866/s, no local queue 491/s.
  localQueue: { size: 500 },
  // Completions and failures written in batches (0: as soon as the event loop turns), not one statement per job.
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
  // The backlog is all due at once, and LISTEN/NOTIFY wakes it for new jobs; polling only finds future ones.
  pollInterval: 2000,
  // Node's clock: run_at compared with the harness's, not a now() per statement.
  useNodeTime: true,
  schema: 'graphile_worker',
};

/** The one task: POST a signed delivery. */
export const PEER_TASK = 'deliver';
