/**
 * One run of an alert: its queries on the source's graph (read-only, its time-out, its match cap), every row a
 * match, all of them recorded in ONE transaction with their events' deliveries (record-matches.ts), together with
 * the run's record and the alert's next due time. A run is claimed with a short lease (claimDueAlert, claimAlert),
 * renewed while the run lives (run-lease.ts); the transaction commits only while the claim is still this process's,
 * so a run is recorded once, even when a process is killed mid-run and another does it again after the lease.
 *
 * The queries are all started before the transaction opens, so the time the engine takes to answer is not spent
 * holding it: the transaction lasts as long as reading the rows and writing them. The embedded engine has an answer
 * made when its query starts; a Bolt server makes its answer as it is read, so a stream without the engine's
 * identified batches (a Bolt graph's) is read whole first (read-ahead.ts), and recorded after: the alert's lock, and
 * the embedded database's one session, are never held while a Bolt server works out its answer.
 */
import { AdvisoryLockNamespace } from '../db/advisory-locks.js';
import type { Database, Queryable } from '../db/database.js';
import { GraphError, type RowStream } from '../graph/graph-source.js';
import type { GraphRow } from '../graph/items.js';
import type { Logger } from '../logger.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import { ALERT_THREADS } from '../sources/graph-share.js';
import { nextScheduledRun } from './alert-schedule.js';
import { identifiedBatches, matchOfRow } from './alert-rows.js';
import { identityOfKey, NO_MATCH, TOO_LARGE } from '../graph/match-identity.js';
import { hashTarget, MAX_TARGET_IDS } from './target.js';
import { alertQueries, effectiveLimits, type AlertLimits, type AlertRow, type RunProblem } from './alerts.js';
import { recordedBefore, recordMatches, type FoundMatch } from './record-matches.js';
import { readEventRouting, type EventRouting } from '../outbox/enqueue.js';
import { knownAs, type RecordedMatches } from './recorded-matches.js';
import { readAhead, READ_AHEAD_BYTES } from './read-ahead.js';
import { holdLease, RUN_LEASE_MS } from './run-lease.js';
import { MAX_DELIVERIES_PER_RUN } from '../limits.js';

// Matches written per statement group: bounds the memory a run holds, whatever its size.
const BATCH = 1000;
// After a run that could not reach the graph, the next try waits this long, doubling up to RETRY_MAX_MS.
const RETRY_FIRST_MS = 30_000;
const RETRY_MAX_MS = 3_600_000;

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

export interface RunSummary {
  alertId: number;
  sourceKey: string;
  trigger: 'schedule' | 'manual';
  outcome: 'ok' | 'partial' | 'failed';
  durationMs: number;
  /** Rows the queries answered and the run read (each counts towards maxMatches, a match or not, met before or not). */
  rowsRead: number;
  /** Distinct matches the run found that the alert had not recorded: each recorded once, however many rows found it. */
  matchesNew: number;
  /** Distinct matches the run found that the alert had recorded before this run. */
  matchesSeen: number;
  /** Of matchesSeen, those this process knew recorded (RecordedMatches): not looked up in the database. */
  matchesKnown: number;
  /** Rows moved whole from the graph (the others by their identity alone): the matches new to the alert. */
  rowsMoved: number;
  casesOpened: number;
  events: number;
  problems: RunProblem[];
}

/**
 * `claimed_at`: the database's clock when the run was claimed. A manual request (run_requested_at, set with the
 * database's now()) made before it is answered by this run; one made later asks for another. Both times come from
 * the database: a service clock behind the database's left a request never answered (the alert ran again and again),
 * one ahead let a request made during the run go unanswered.
 */
export type ClaimedAlert = AlertRow & { manual: boolean; claimed_at: Date };

/** A claim's lease: short, whatever the run's time-out, and renewed while the run lives (run-lease.ts). */
const leaseMsOf = (limits: AlertLimits) => limits.runLeaseMs ?? RUN_LEASE_MS;
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

class LostClaim extends Error {}

function problemOf(err: unknown, queryId: number | undefined, partial: boolean): RunProblem {
  const key = err instanceof GraphError ? err.key : 'data_source_unavailable';
  const message = err instanceof Error ? err.message : String(err);
  // A time-out may have cut what the query would have found: the run is partial, whatever was read.
  return { source: 'alertQuery', ...(queryId === undefined ? {} : { queryId }), error: { key, message }, partial: partial || key === 'graph_request_timeout' };
}

/** Runs a claimed alert to its end and records it, renewing its lease meanwhile; answers what the run did (also when it failed). */
export async function runClaimedAlert(deps: RunDependencies, alert: ClaimedAlert): Promise<RunSummary> {
  const lease = holdLease(deps.db, deps.owner, alert.id, leaseMsOf(deps.limits), deps.logger);
  try {
    return await runHeldAlert(deps, alert);
  } finally {
    await lease.stop();
  }
}

async function runHeldAlert(deps: RunDependencies, alert: ClaimedAlert): Promise<RunSummary> {
  const { db, graphs, limits, logger } = deps;
  const trigger = alert.manual ? 'manual' : 'schedule';
  const startedAt = new Date();
  const started = performance.now();
  const { maxMatches, timeoutMs } = effectiveLimits(alert, limits);
  const problems: RunProblem[] = [];
  const summary: RunSummary = { alertId: alert.id, sourceKey: alert.source_key, trigger, outcome: 'ok', durationMs: 0, rowsRead: 0, matchesNew: 0, matchesSeen: 0, matchesKnown: 0, rowsMoved: 0, casesOpened: 0, events: 0, problems };
  const queries = await alertQueries(db, alert.id);
  const streams: { queryId: number; stream: RowStream }[] = [];
  let unavailable = false;
  try {
    const { graph } = await graphs.require(db, alert.source_key);
    // timeoutMs is the run's: its queries share it, each given what the ones before it left. Each query with a
    // time-out of its own let a run of several outlive its lease (one timeoutMs and a margin), and another process
    // could claim it while it ran.
    const deadline = started + timeoutMs;
    for (const q of queries) {
      const left = Math.floor(deadline - performance.now());
      if (left <= 0) {
        problems.push({ source: 'alertQuery', queryId: q.id, error: { key: 'graph_request_timeout', message: `not run: the queries before it took the run's time-out (timeoutMs, ${timeoutMs} ms)` }, partial: true });
        continue;
      }
      // Every worker thread of the engine but one, which stays the users' (graph-share.ts).
      try {
        const stream = await graph.run(q.query, { readOnly: true, timeoutMs: left, maxRows: maxMatches + 1, properties: false, threads: ALERT_THREADS });
        // A stream without the engine's batches (Bolt) is read now, before the transaction opens (read-ahead.ts).
        streams.push({ queryId: q.id, stream: stream.identified ? stream : await readAhead(stream, READ_AHEAD_BYTES) });
      } catch (err) {
        if (err instanceof GraphError && err.key === 'data_source_unavailable') unavailable = true;
        problems.push(problemOf(err, q.id, false));
      }
    }
  } catch (err) {
    unavailable = true;
    problems.push({ ...problemOf(err, undefined, false), source: 'alert' });
  }

  try {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [AdvisoryLockNamespace.alertMatches, alert.id]);
      const { rows } = await tx.query<{ run_owner: string | null; title: string; description: string; cron: string | null; run_requested_at: Date | null; matches_epoch: string }>(
        'SELECT run_owner, title, description, cron, run_requested_at, matches_epoch::text FROM alerts WHERE id = $1 FOR UPDATE',
        [alert.id],
      );
      const current = rows[0];
      // Deleted meanwhile, or the lease ran out and another process took the run over: this one records nothing.
      if (!current || current.run_owner !== deps.owner) throw new LostClaim();
      // Who gets the run's events, read once for all its batches.
      const routing = await readEventRouting(tx, ['newCase', 'newMatch']);
      // What this process knows the alert recorded, unless a match was deleted since; and what this run learns, once
      // it committed. An alert with more matches than all that is known may hold is not learnt (undefined): it would
      // push every other alert out and still be known only in part, and what it read is let go as it goes.
      const recorded = deps.recorded;
      const known = recorded?.known(alert.id, current.matches_epoch) ?? new Set<string>();
      let learnt: string[] | undefined = recorded && [];
      tx.afterCommit(() => {
        if (learnt) recorded?.learn(alert.id, current.matches_epoch, learnt);
        else recorded?.forget(alert.id);
      });
      const context = { publicBaseUrl: deps.publicBaseUrl, sourceKey: alert.source_key, alert: { id: alert.id, title: current.title, description: current.description }, routing };
      let capped = false;
      // A run records at most maxDeliveries deliveries: each new match is one event, delivered to every webhook
      // subscribed to newCase or newMatch on the source (at most), so at most newMatchesAllowed new matches. Past
      // them it stops: the matches not recorded are new to the next run, which records them.
      const maxDeliveries = deps.maxDeliveries ?? MAX_DELIVERIES_PER_RUN;
      const subscribers = subscribedWebhooks(routing, alert.source_key);
      const newMatchesAllowed = subscribers === 0 ? Infinity : Math.floor(maxDeliveries / subscribers);
      let deliveriesCapped = false;
      // The matches this run met, by name (knownAs), over all its queries and batches: a row of a match met already
      // is a row read, not another match (2 matches found by 7 rows are 2 matches). At most maxMatches of them.
      const met = new Set<string>();
      // A batch is looked up and written while the next is read: the database's work and the graph's overlap. At
      // most one batch is under way (the transaction's statements run one at a time, and a batch's lookup must see
      // the matches the batch before it inserted), so the Kùzu process holds at most four batches (the stream asks
      // for two ahead).
      let writing: Promise<void> = Promise.resolve();
      const write = async (step: () => Promise<void>) => {
        await writing;
        const written = step();
        // Its failure is thrown where it is awaited (the next write, or the end), not as an unhandled rejection.
        written.catch(() => undefined);
        writing = written;
      };
      try {
        for (const { queryId, stream } of streams) {
          const oversized = { rows: 0, first: 0 };
          // One problem per query for a failure of the graph, whether met reading identities or picking rows.
          let failed = false;
          const graphFailed = (err: unknown) => {
            if (!(err instanceof GraphError)) throw err;
            if (!failed) problems.push(problemOf(err, queryId, true));
            failed = true;
          };
          try {
            for await (const batch of identifiedBatches(stream, BATCH)) {
              let keys = batch.keys;
              // Past maxMatches the run stops reading: the rows up to it are recorded, the rest not read.
              if (summary.rowsRead + keys.length > maxMatches) {
                keys = keys.slice(0, Math.max(0, maxMatches - summary.rowsRead));
                capped = true;
              }
              const firstRow = summary.rowsRead + 1;
              summary.rowsRead += keys.length;
              // The rows that may be new matches: the first row of each match this run meets, unless known recorded.
              // Only theirs are hashed and looked up: none in an unchanged rerun.
              const candidates: number[] = [];
              const names: string[] = [];
              const metHere: string[] = [];
              let knownBefore = 0;
              for (let i = 0; i < keys.length; i++) {
                const key = keys[i]!;
                if (key === NO_MATCH) continue;
                if (key === TOO_LARGE) {
                  oversized.first ||= firstRow + i;
                  oversized.rows++;
                  continue;
                }
                const name = knownAs(key);
                if (met.has(name)) continue;
                met.add(name);
                metHere.push(name);
                if (known.has(name)) knownBefore++;
                else {
                  candidates.push(i);
                  names.push(name);
                }
              }
              await write(async () => {
                // Past the deliveries' bound nothing more is recorded (the loop stops at its next batch).
                if (deliveriesCapped) return;
                // A long key is known by its hash (knownAs): that name is its identity already.
                const identities = candidates.map((i, k) => (names[k] === keys[i] ? identityOfKey(keys[i]!) : names[k]!));
                const seen = new Set(await recordedBefore(tx, alert.id, identities));
                const unseen: number[] = [];
                for (let k = 0; k < candidates.length; k++) if (!seen.has(k)) unseen.push(k);
                // Only the rows of matches never recorded are moved from the engine (none in an unchanged rerun).
                let rows: GraphRow[];
                try {
                  rows = await batch.rows(unseen.map((k) => candidates[k]!));
                } catch (err) {
                  // The graph went away (a hard stop) before the rows came: the batch is not recorded, the run partial.
                  graphFailed(err);
                  summary.rowsRead -= keys.length;
                  // Nor are its matches met: a later row of one is its first.
                  for (const name of metHere) met.delete(name);
                  return;
                }
                let found = rows.map((row, j): FoundMatch => {
                  const match = matchOfRow(row, alert.target, alert.columns);
                  const hash = match && hashTarget(match.identity);
                  // The engine's identity and this process's are made by one function (match-identity.ts); a row whose
                  // two differ would be recorded again by every run, so it fails the run instead.
                  if (!match || hash !== identities[unseen[j]!]) throw new Error(`row ${firstRow + candidates[unseen[j]!]!}: its match identity differs between the graph process and the service`);
                  return { ...match, hash };
                });
                summary.matchesSeen += knownBefore + seen.size;
                summary.matchesKnown += knownBefore;
                summary.rowsMoved += found.length;
                if (summary.matchesNew + found.length > newMatchesAllowed) {
                  found = found.slice(0, Math.max(0, newMatchesAllowed - summary.matchesNew));
                  deliveriesCapped = true;
                  // What this process knows recorded would now hold matches that were not: it asks the database next time.
                  learnt = undefined;
                }
                if (found.length > 0) {
                  const recorded = await recordMatches(tx, context, found, 'run');
                  summary.matchesNew += recorded.matchesNew;
                  summary.casesOpened += recorded.casesOpened;
                  summary.events += recorded.events;
                }
                // Every candidate is recorded now: found before, or just now.
                if (learnt) {
                  for (const name of names) learnt.push(name);
                  if (known.size + learnt.length > recorded!.maxKeys) learnt = undefined;
                }
              });
              if (capped || deliveriesCapped) break;
            }
          } catch (err) {
            // What was read before the time-out (or the graph going away) is kept: the run is partial.
            graphFailed(err);
          } finally {
            // The last batches' rows are picked before the stream is closed (closing drops them in the engine).
            await writing.catch(() => undefined);
            await stream.close();
          }
          if (oversized.rows > 0) {
            const message = `${oversized.rows} ${oversized.rows === 1 ? 'row was' : 'rows were'} not recorded (the first: row ${oversized.first}): each holds more than ${MAX_TARGET_IDS} nodes and edges, the most a match may hold`;
            problems.push({ source: 'alertQuery', queryId, error: { key: 'match_too_large', message }, partial: true });
          }
          if (capped || deliveriesCapped) break;
        }
        await writing;
      } finally {
        // No statement of this transaction is left running past its end, whatever ended it.
        await writing.catch(() => undefined);
      }
      if (capped) {
        problems.push({ source: 'alert', error: { key: 'max_matches_reached', message: `the run stopped reading after ${maxMatches} rows (maxMatches: every row read counts, a match or not); the rest were not read` }, partial: true });
      }
      if (deliveriesCapped) {
        const message =
          `the run recorded ${summary.matchesNew} new matches and stopped: each new match goes to up to ${subscribers} subscribed webhooks, and a run creates at most ` +
          `${maxDeliveries} deliveries (matches × subscribed webhooks); the matches past them were not recorded, and the next run records them`;
        problems.push({ source: 'alert', error: { key: 'max_deliveries_reached', message }, partial: true });
      }
      // Partial: something was read, or stopped by a limit; failed: a problem and nothing read.
      summary.outcome = problems.length === 0 ? 'ok' : problems.some((p) => p.partial) || summary.rowsRead > 0 ? 'partial' : 'failed';
      summary.durationMs = Math.round(performance.now() - started);
      await recordRun(tx, alert, startedAt, summary, nextDue(current.cron, unavailable, alert, startedAt, deps.limits.minIntervalMs), unavailable);
    });
  } catch (err) {
    await Promise.all(streams.map(({ stream }) => stream.close().catch(() => undefined)));
    if (err instanceof LostClaim) {
      logger.warn({ alertId: alert.id }, 'alert run dropped: its claim was lost (the alert was deleted, or the lease ran out and another process runs it)');
      summary.outcome = 'failed';
      return summary;
    }
    // Anything else (the database refused what the run would record, a bug) rolled the run back whole. Left so, the
    // alert kept its lease and its due time, and each lease's end ran it again, failing the same way, with nothing to
    // see on the alert: it is recorded failed instead, and runs again at its next CRON time.
    // What it counted was rolled back with it: the run is recorded as having kept nothing.
    Object.assign(summary, { outcome: 'failed', durationMs: Math.round(performance.now() - started), rowsRead: 0, matchesNew: 0, matchesSeen: 0, matchesKnown: 0, rowsMoved: 0, casesOpened: 0, events: 0 });
    const problem: RunProblem = { source: 'alert', error: { key: 'alert_run_failed', message: `the run failed and recorded none of its matches: ${err instanceof Error ? err.message : String(err)}` }, partial: false };
    summary.problems.splice(0, summary.problems.length, problem);
    logger.error({ alertId: alert.id, sourceKey: alert.source_key, err }, 'alert run failed: recorded as failed, none of its matches kept');
    const recorded = await recordFailedRun(deps, alert, startedAt, summary).catch((recordErr: unknown) => {
      logger.error({ alertId: alert.id, err: recordErr }, 'alert run failed, and recording it failed too: its lease runs out and it is run again');
      return false;
    });
    // Not even that could be written (the database is away): the lease runs out and the run is tried again.
    if (!recorded) throw err;
    deps.onRun?.(summary);
    return summary;
  }
  deps.onRun?.(summary);
  logger.info(
    { alertId: alert.id, sourceKey: alert.source_key, trigger, outcome: summary.outcome, durationMs: summary.durationMs, rowsRead: summary.rowsRead, matchesNew: summary.matchesNew, matchesSeen: summary.matchesSeen, matchesKnown: summary.matchesKnown, rowsMoved: summary.rowsMoved, casesOpened: summary.casesOpened, events: summary.events, problems: problems.map((p) => p.error.key) },
    'alert run',
  );
  return summary;
}

/** The webhooks a new match of `sourceKey` may go to: those subscribed to newCase or newMatch on it (or on every source). */
function subscribedWebhooks(routing: EventRouting, sourceKey: string): number {
  if (!routing.enabled) return 0;
  const ids = new Set<number>();
  for (const s of routing.subscriptions) if ((s.event_type === 'newCase' || s.event_type === 'newMatch') && (s.source_key === null || s.source_key === sourceKey)) ids.add(s.webhook_id);
  return ids.size;
}

/** Records a run that failed whole, and frees its alert until its next CRON time; false when the claim was lost. */
async function recordFailedRun(deps: RunDependencies, alert: ClaimedAlert, startedAt: Date, summary: RunSummary): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ run_owner: string | null; cron: string | null }>('SELECT run_owner, cron FROM alerts WHERE id = $1 FOR UPDATE', [alert.id]);
    if (!rows[0] || rows[0].run_owner !== deps.owner) return false;
    await recordRun(tx, alert, startedAt, summary, nextDue(rows[0].cron, false, alert, startedAt, deps.limits.minIntervalMs), false);
    return true;
  });
}

/**
 * A run's record, and its alert freed: its lease given back, its last run and problems, the manual request it
 * answered cleared, its next due time. `unavailable`: the graph could not be reached (the retries' streak grows).
 */
async function recordRun(tx: Queryable, alert: ClaimedAlert, startedAt: Date, summary: RunSummary, nextRunAt: Date | null, unavailable: boolean): Promise<void> {
  const problems = JSON.stringify(summary.problems);
  await tx.query(
    `INSERT INTO alert_runs (alert_id, trigger, outcome, started_at, duration_ms, rows_read, matches_new, matches_seen, cases_opened, events_emitted, problems)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [alert.id, summary.trigger, summary.outcome, startedAt, summary.durationMs, summary.rowsRead, summary.matchesNew, summary.matchesSeen, summary.casesOpened, summary.events, problems],
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

/**
 * The next due time: the CRON's next after now (missed times are not made up for), or, after a run that could not
 * reach the graph, sooner: a retry that waits longer each time, never later than the CRON's next time. Either is at
 * least `minIntervalMs` (ALERTS_MIN_INTERVAL_MS) after this run's start.
 */
function nextDue(cron: string | null, unavailable: boolean, alert: AlertRow, startedAt: Date, minIntervalMs = 0): Date | null {
  const now = new Date();
  const regular = cron ? nextScheduledRun(cron, now, startedAt, minIntervalMs) : null;
  if (!unavailable) return regular;
  const retry = new Date(Math.max(now.getTime() + Math.min(RETRY_FIRST_MS * 2 ** alert.unavailable_streak, RETRY_MAX_MS), startedAt.getTime() + minIntervalMs));
  return regular && regular < retry ? regular : retry;
}
