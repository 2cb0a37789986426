/**
 * The last phase of an alert run: what it did, as its summary, its outcome, and its alert's next due time; and the
 * record of a run that failed whole, written in a transaction of its own.
 */
import type { Database } from '../db/database.js';
import type { AlertRow, RunProblem } from './alerts.js';
import { nextScheduledRun } from './alert-schedule.js';
import { ownedAlert, recordRun, type ClaimedAlert } from './alert-run-store.js';
import { NO_WRITES, type WriteCounts } from './run-write.js';

// After a run that could not reach the graph, the next try waits this long, doubling up to RETRY_MAX_MS.
const RETRY_FIRST_MS = 30_000;
const RETRY_MAX_MS = 3_600_000;

/** What a run read and recorded. */
export interface RunCounts extends WriteCounts {
  /** Rows the queries answered and the run read (each counts towards maxMatches, a match or not, met before or not). */
  rowsRead: number;
}

export const NO_COUNTS: RunCounts = { rowsRead: 0, ...NO_WRITES };

export interface RunSummary extends RunCounts {
  alertId: number;
  sourceKey: string;
  trigger: 'schedule' | 'manual';
  outcome: 'ok' | 'partial' | 'failed';
  durationMs: number;
  problems: RunProblem[];
}

/**
 * A run's summary. Its outcome, unless given: ok without a problem; partial when something was read, or a limit
 * stopped it; failed when a problem left nothing read.
 */
export function summaryOf(alert: ClaimedAlert, durationMs: number, counts: RunCounts, problems: RunProblem[], outcome?: RunSummary['outcome']): RunSummary {
  outcome ??= problems.length === 0 ? 'ok' : problems.some((p) => p.partial) || counts.rowsRead > 0 ? 'partial' : 'failed';
  return { alertId: alert.id, sourceKey: alert.source_key, trigger: alert.manual ? 'manual' : 'schedule', outcome, durationMs, ...counts, problems };
}

/**
 * The summary of a run whose transaction failed (the database refused what it would record, a bug): rolled back
 * whole, what it counted with it, so it is recorded as having kept nothing, with the failure as its one problem.
 */
export function failedRunSummary(alert: ClaimedAlert, durationMs: number, err: unknown): RunSummary {
  const message = `the run failed and recorded none of its matches: ${err instanceof Error ? err.message : String(err)}`;
  return summaryOf(alert, durationMs, NO_COUNTS, [{ source: 'alert', error: { key: 'alert_run_failed', message }, partial: false }], 'failed');
}

/**
 * Records a run that failed whole, and frees its alert until its next CRON time; false when the claim was lost. Left
 * unrecorded, the alert kept its lease and its due time, and each lease's end ran it again, failing the same way,
 * with nothing to see on the alert.
 */
export async function recordFailedRun(db: Database, owner: string, alert: ClaimedAlert, startedAt: Date, summary: RunSummary, minIntervalMs?: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    const current = await ownedAlert(tx, alert.id, owner);
    if (!current) return false;
    await recordRun(tx, alert, startedAt, summary, nextDue(current.cron, false, alert, startedAt, minIntervalMs), false);
    return true;
  });
}

/**
 * The next due time: the CRON's next after now (missed times are not made up for), or, after a run that could not
 * reach the graph, sooner: a retry that waits longer each time, never later than the CRON's next time. Either is at
 * least `minIntervalMs` (ALERTS_MIN_INTERVAL_MS) after this run's start.
 */
export function nextDue(cron: string | null, unavailable: boolean, alert: AlertRow, startedAt: Date, minIntervalMs = 0): Date | null {
  const now = new Date();
  const regular = cron ? nextScheduledRun(cron, now, startedAt, minIntervalMs) : null;
  if (!unavailable) return regular;
  const retry = new Date(Math.max(now.getTime() + Math.min(RETRY_FIRST_MS * 2 ** alert.unavailable_streak, RETRY_MAX_MS), startedAt.getTime() + minIntervalMs));
  return regular && regular < retry ? regular : retry;
}
