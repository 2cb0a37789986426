/**
 * The SQL of an alert run, in one place, as outbox/claims.ts holds the deliveries' (graphile-worker's `src/sql/` is
 * the model): the claim with its lease, its renewal, the alert's row locked for the run's transaction, and the run's
 * record that frees the alert. Each takes the database or the transaction as its first argument.
 *
 * A claim is a short lease (RUN_LEASE_MS, renewed while the run lives: run-lease.ts); the run's transaction writes
 * only while the claim is still this process's (ownedAlert, under the alert's row lock), so a run is recorded once,
 * even when a process is killed mid-run and another does it again after the lease.
 */
import { AdvisoryLockNamespace } from '../db/advisory-locks.js';
import type { Queryable } from '../db/database.js';
import type { AlertLimits, AlertRow, RunProblem } from './alerts.js';
import { RUN_LEASE_MS } from './run-lease.js';

/**
 * `claimed_at`: the database's clock when the run was claimed. A manual request (run_requested_at, set with the
 * database's now()) made before it is answered by this run; one made later asks for another. Both times come from
 * the database: a service clock behind the database's left a request never answered (the alert ran again and again),
 * one ahead let a request made during the run go unanswered.
 */
export type ClaimedAlert = AlertRow & { manual: boolean; claimed_at: Date };

/** A claim's lease: short, whatever the run's time-out, and renewed while the run lives (run-lease.ts). */
export const leaseMsOf = (limits: AlertLimits): number => limits.runLeaseMs ?? RUN_LEASE_MS;
const leaseSql = (limits: AlertLimits) => `now() + ${Math.floor(leaseMsOf(limits))} * interval '1 millisecond'`;

/**
 * Claims the alert due first among those this process may run (a graph it can reach: any Bolt graph, the embedded
 * graphs it holds), or nothing. A manual request counts as due at once.
 */
export async function claimDueAlert(db: Queryable, owner: string, embedded: readonly string[], limits: AlertLimits): Promise<ClaimedAlert | undefined> {
  const { rows } = await db.query<ClaimedAlert>(
    `UPDATE alerts a SET run_owner = $1, run_locked_until = ${leaseSql(limits)}
     FROM (SELECT d.id, d.run_requested_at IS NOT NULL AS manual FROM alerts d JOIN data_sources s ON s.key = d.source_key
           WHERE s.graph IS NOT NULL AND (s.graph->>'vendor' <> 'embedded' OR d.source_key = ANY($2::text[]))
             AND (d.run_requested_at IS NOT NULL OR (d.enabled AND d.next_run_at <= now()))
             AND (d.run_locked_until IS NULL OR d.run_locked_until < now())
           ORDER BY LEAST(d.run_requested_at, d.next_run_at) LIMIT 1 FOR UPDATE OF d SKIP LOCKED) due
     WHERE a.id = due.id RETURNING a.*, due.manual, now() AS claimed_at`,
    [owner, embedded],
  );
  return rows[0];
}

/** Claims one alert to run it now (POST …/run); nothing when a run of it is under way. */
export async function claimAlert(db: Queryable, owner: string, alertId: number, limits: AlertLimits): Promise<ClaimedAlert | undefined> {
  const { rows } = await db.query<ClaimedAlert>(
    `UPDATE alerts a SET run_owner = $1, run_locked_until = ${leaseSql(limits)}
     WHERE a.id = $2 AND (a.run_locked_until IS NULL OR a.run_locked_until < now()) RETURNING a.*, true AS manual, now() AS claimed_at`,
    [owner, alertId],
  );
  return rows[0];
}

/** Extends `owner`'s claim on the alert by `leaseMs` from now; nothing once the claim is another's or given back. */
export async function renewLease(db: Queryable, owner: string, alertId: number, leaseMs: number): Promise<void> {
  await db.query(`UPDATE alerts SET run_locked_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND run_owner = $2 AND run_locked_until IS NOT NULL`, [
    alertId,
    owner,
    leaseMs,
  ]);
}

/** The alert as its run's transaction reads it, under its row lock. */
export interface OwnedAlert {
  title: string;
  description: string;
  cron: string | null;
  /** Moved by every statement deleting any of its matches (migration 0014): what a process knows holds at one epoch. */
  matches_epoch: string;
}

/**
 * Takes the alert's matches lock (the one a match report takes, so the run's look-ups see every match recorded
 * before it), for the rest of the transaction.
 */
export async function lockAlertMatches(tx: Queryable, alertId: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [AdvisoryLockNamespace.alertMatches, alertId]);
}

/**
 * The alert, locked for the rest of the transaction, while `owner`'s claim holds; undefined when it was deleted
 * meanwhile, or its lease ran out and another process took the run over (this one then records nothing). Under the
 * row lock no other process can claim it, whatever the lease says.
 */
export async function ownedAlert(tx: Queryable, alertId: number, owner: string): Promise<OwnedAlert | undefined> {
  const { rows } = await tx.query<OwnedAlert & { run_owner: string | null }>(
    'SELECT run_owner, title, description, cron, matches_epoch::text FROM alerts WHERE id = $1 FOR UPDATE',
    [alertId],
  );
  const row = rows[0];
  return row && row.run_owner === owner ? row : undefined;
}

/** What a run's record holds (RunSummary, alert-run.ts, is one). */
export interface RunRecord {
  trigger: 'schedule' | 'manual';
  outcome: 'ok' | 'partial' | 'failed';
  durationMs: number;
  rowsRead: number;
  matchesNew: number;
  matchesSeen: number;
  casesOpened: number;
  events: number;
  problems: RunProblem[];
}

/**
 * A run's record, and its alert freed: its lease given back, its last run and problems, the manual request it
 * answered cleared, its next due time. `unavailable`: the graph could not be reached (the retries' streak grows).
 */
export async function recordRun(tx: Queryable, alert: ClaimedAlert, startedAt: Date, run: RunRecord, nextRunAt: Date | null, unavailable: boolean): Promise<void> {
  const problems = JSON.stringify(run.problems);
  await tx.query(
    `INSERT INTO alert_runs (alert_id, trigger, outcome, started_at, duration_ms, rows_read, matches_new, matches_seen, cases_opened, events_emitted, problems)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [alert.id, run.trigger, run.outcome, startedAt, run.durationMs, run.rowsRead, run.matchesNew, run.matchesSeen, run.casesOpened, run.events, problems],
  );
  await tx.query(
    `UPDATE alerts SET run_owner = NULL, run_locked_until = NULL, last_run_at = $2, last_run_problems = $3,
       run_requested_at = CASE WHEN run_requested_at <= $6 THEN NULL ELSE run_requested_at END,
       unavailable_streak = CASE WHEN $5 THEN unavailable_streak + 1 ELSE 0 END,
       next_run_at = CASE WHEN enabled AND cron IS NOT NULL THEN $4::timestamptz ELSE NULL END
     WHERE id = $1`,
    [alert.id, startedAt, problems, nextRunAt, unavailable, alert.claimed_at],
  );
}
