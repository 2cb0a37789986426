/**
 * One run of an alert, as a chain of typed phases, each passing its values to the next:
 *
 *   start the queries (run-queries.ts: before the transaction, so the engine's time is not spent holding it)
 *   → in ONE transaction, under the alert's locks and while the claim is still this process's:
 *       read each batch → classify it (run-classify.ts, pure) → write it (run-write.ts), pipelined (run-read.ts)
 *       → record the run and the alert's next due time (alert-run-store.ts, run-record.ts)
 *   → or, when that transaction failed, record the run failed (run-record.ts).
 *
 * Every row is a match, all of them recorded with their events' deliveries (record-matches.ts), bounded by maxMatches
 * and the deliveries bound (run-bounds.ts). A run is claimed with a short lease (alert-run-store.ts), renewed while
 * it lives (run-lease.ts), so a run is recorded once, even when a process is killed mid-run and another does it
 * again after the lease.
 */
import type { Database, Transaction } from '../db/database.js';
import type { Logger } from '../logger.js';
import { MAX_DELIVERIES_PER_RUN } from '../limits.js';
import { readEventRouting } from '../outbox/enqueue.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import { leaseMsOf, lockAlertMatches, ownedAlert, recordRun, renewLease, type ClaimedAlert } from './alert-run-store.js';
import { alertQueries, effectiveLimits, type AlertLimits } from './alerts.js';
import type { RecordedMatches } from './recorded-matches.js';
import { boundProblems, deliveriesBound } from './run-bounds.js';
import { holdLease } from './run-lease.js';
import { readQueries, type Learnt } from './run-read.js';
import { startQueries, type StartedQueries } from './run-queries.js';
import { failedRunSummary, NO_COUNTS, nextDue, recordFailedRun, summaryOf, type RunSummary } from './run-record.js';

// Where the claims moved (alert-run-store.ts): the routes and the tests claim through here still.
export { claimAlert, claimDueAlert, type ClaimedAlert } from './alert-run-store.js';
export type { RunSummary } from './run-record.js';

export interface RunDependencies {
  db: Database;
  graphs: GraphRegistry;
  publicBaseUrl: string;
  limits: AlertLimits;
  logger: Logger;
  /** This process, as it signs its claims. */
  owner: string;
  /** The matches this process knows each alert recorded: a rerun asks the database only about the others. */
  recorded?: RecordedMatches;
  /** The most deliveries one run records (matches × subscribed webhooks): MAX_DELIVERIES_PER_RUN unless a test says. */
  maxDeliveries?: number;
  /** Counts runs, for the metrics. */
  onRun?: (summary: RunSummary) => void;
}

/** When a run started: `at` on the wall clock (its record), `mark` on the monotonic one (its time-out, its duration). */
interface RunStart {
  at: Date;
  mark: number;
  /** The most rows the run reads (effectiveLimits). */
  maxMatches: number;
}

const NOTHING_KNOWN: ReadonlySet<string> = new Set();

/** Runs a claimed alert to its end and records it, renewing its lease meanwhile; answers what the run did (also when it failed). */
export async function runClaimedAlert(deps: RunDependencies, alert: ClaimedAlert): Promise<RunSummary> {
  const leaseMs = leaseMsOf(deps.limits);
  const lease = holdLease(() => renewLease(deps.db, deps.owner, alert.id, leaseMs), alert.id, leaseMs, deps.logger);
  try {
    return await runHeldAlert(deps, alert);
  } finally {
    await lease.stop();
  }
}

async function runHeldAlert(deps: RunDependencies, alert: ClaimedAlert): Promise<RunSummary> {
  const { db, logger } = deps;
  const at = new Date();
  const mark = performance.now();
  const { maxMatches, timeoutMs } = effectiveLimits(alert, deps.limits);
  const start: RunStart = { at, mark, maxMatches };
  const queries = await alertQueries(db, alert.id);
  const begun = await startQueries(db, deps.graphs, alert.source_key, queries, { maxMatches, timeoutMs, started: mark });
  let summary: RunSummary | 'claimLost';
  try {
    summary = await db.transaction((tx) => recordInTransaction(tx, deps, alert, begun, start));
  } catch (err) {
    await Promise.allSettled(begun.streams.map(({ stream }) => stream.close()));
    return recordFailure(deps, alert, start, err);
  }
  if (summary === 'claimLost') {
    await Promise.allSettled(begun.streams.map(({ stream }) => stream.close()));
    logger.warn({ alertId: alert.id }, 'alert run dropped: its claim was lost (the alert was deleted, or the lease ran out and another process runs it)');
    return summaryOf(alert, Math.round(performance.now() - start.mark), NO_COUNTS, begun.problems, 'failed');
  }
  deps.onRun?.(summary);
  const { problems, ...counts } = summary;
  logger.info({ ...counts, problems: problems.map((p) => p.error.key) }, 'alert run');
  return summary;
}

/**
 * The run's transaction: the alert locked while this process's claim holds (or nothing done: 'claimLost'), its
 * queries read and written, what it learnt kept once it commits, and its record.
 */
async function recordInTransaction(tx: Transaction, deps: RunDependencies, alert: ClaimedAlert, begun: StartedQueries, start: RunStart): Promise<RunSummary | 'claimLost'> {
  await lockAlertMatches(tx, alert.id);
  const current = await ownedAlert(tx, alert.id, deps.owner);
  if (!current) return 'claimLost';
  // Who gets the run's events, read once for all its batches.
  const routing = await readEventRouting(tx, ['newCase', 'newMatch']);
  const bound = deliveriesBound(routing, alert.source_key, deps.maxDeliveries ?? MAX_DELIVERIES_PER_RUN);
  // What this process knows the alert recorded, unless a match was deleted since (its epoch moved).
  const { recorded } = deps;
  const known = recorded?.known(alert.id, current.matches_epoch) ?? NOTHING_KNOWN;
  const context = { publicBaseUrl: deps.publicBaseUrl, sourceKey: alert.source_key, alert: { id: alert.id, title: current.title, description: current.description }, routing };
  const tally = await readQueries(
    { tx, alert, context, maxMatches: start.maxMatches, newMatchesAllowed: bound.newMatchesAllowed, known, learnRoom: recorded && recorded.maxKeys - known.size },
    begun.streams,
  );
  tx.afterCommit(() => learn(recorded, alert.id, current.matches_epoch, tally.learnt));
  const stopped = { capped: tally.capped, deliveriesCapped: tally.deliveriesCapped, matchesNew: tally.written.matchesNew };
  const problems = [...begun.problems, ...tally.problems, ...boundProblems(stopped, start.maxMatches, bound)];
  const summary = summaryOf(alert, Math.round(performance.now() - start.mark), { rowsRead: tally.rowsRead, ...tally.written }, problems);
  await recordRun(tx, alert, start.at, summary, nextDue(current.cron, begun.unavailable, alert, start.at, deps.limits.minIntervalMs), begun.unavailable);
  return summary;
}

/** What a committed run found recorded, kept by this process; or the alert forgotten, when it could not know it all. */
function learn(recorded: RecordedMatches | undefined, alertId: number, epoch: string, learnt: Learnt): void {
  if (learnt === 'forget') recorded?.forget(alertId);
  else recorded?.learn(alertId, epoch, learnt.batches.flat());
}

/**
 * A run whose transaction failed (the database refused what it would record, a bug) rolled back whole: it is recorded
 * failed, and runs again at its next CRON time. When not even that can be written (the database is away), the
 * failure is thrown: the lease runs out and the run is tried again.
 */
async function recordFailure(deps: RunDependencies, alert: ClaimedAlert, start: RunStart, err: unknown): Promise<RunSummary> {
  const { logger } = deps;
  const summary = failedRunSummary(alert, Math.round(performance.now() - start.mark), err);
  logger.error({ alertId: alert.id, sourceKey: alert.source_key, err }, 'alert run failed: recorded as failed, none of its matches kept');
  const recorded = await recordFailedRun(deps.db, deps.owner, alert, start.at, summary, deps.limits.minIntervalMs).catch((recordErr: unknown) => {
    logger.error({ alertId: alert.id, err: recordErr }, 'alert run failed, and recording it failed too: its lease runs out and it is run again');
    return false;
  });
  if (!recorded) throw err;
  deps.onRun?.(summary);
  return summary;
}
