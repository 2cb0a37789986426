/**
 * Alerts: a title and description, and on a source with a graph the Cypher queries that find its matches, the
 * CRON they run on, the columns picked from each row and the variable that names a match's case (LKE's alert).
 */
import { recordAudit } from '../audit/audit-log.js';
import type { Principal } from '../auth/principal.js';
import type { Database, Queryable, Transaction } from '../db/database.js';
import { AppError, invalidParameter, notFound } from '../errors.js';
import { requireDataSources } from '../sources/sources.js';
import { auditedAlert } from './alert-audit.js';
import { checkAlertCron, nextRunAfter } from './alert-schedule.js';
import { COLUMN_TYPES, MAX_COLUMN_NAME, MAX_COLUMNS, MAX_DESCRIPTION, MAX_QUERIES, MAX_QUERY_NAME, MAX_QUERY_TEXT, MAX_TITLE, type Alert, type AlertColumn, type CaseStatus, type AlertQuery, type AlertRunRecord, type RunProblem } from './schemas.js';

export const MAX_RUNS_SHOWN = 10;
// A returned variable's name, as Cypher writes it unquoted.
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,199}$/;

export type { Alert, AlertColumn, AlertQuery, AlertRunRecord, RunProblem } from './schemas.js';

export interface AlertRow {
  id: number;
  source_key: string;
  title: string;
  description: string;
  enabled: boolean;
  cron: string | null;
  columns: AlertColumn[];
  target: string | null;
  max_matches: number | null;
  timeout_ms: number | null;
  next_run_at: Date | null;
  run_requested_at: Date | null;
  run_locked_until: Date | null;
  last_run_at: Date | null;
  last_run_problems: RunProblem[];
  run_owner: string | null;
  unavailable_streak: number;
  created_at: Date;
  updated_at: Date;
}

/** The most an alert may ask for (ALERTS_MAX_MATCHES_LIMIT, ALERTS_MAX_RUNTIME_LIMIT_MS), and its defaults. */
export interface AlertLimits {
  maxMatches: number;
  maxRuntimeMs: number;
  /** ALERTS_MIN_INTERVAL_MS: the least time between two scheduled runs of an alert (alert-schedule.ts); none when absent. */
  minIntervalMs?: number;
  /** How long a run's claim holds without renewal (run-lease.ts, RUN_LEASE_MS); tests shorten it. */
  runLeaseMs?: number;
}

export interface QueryInput {
  id?: number | undefined;
  operation?: 'create' | 'update' | 'delete' | undefined;
  name?: string | undefined;
  query?: string | undefined;
  dialect?: string | undefined;
  description?: string | undefined;
}

export interface AlertInput {
  title?: string | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
  cron?: string | null | undefined;
  columns?: AlertColumn[] | undefined;
  queries?: QueryInput[] | undefined;
  target?: string | null | undefined;
  maxMatches?: number | null | undefined;
  timeoutMs?: number | null | undefined;
}

/** What the graph side checks of an alert's queries before it is saved (alert-check.ts): throws on a bad one. */
export type QueryChecker = (sourceKey: string, queries: { name: string; query: string }[], target: string | null, columns: AlertColumn[], timeoutMs: number) => Promise<void>;

export function effectiveLimits(row: Pick<AlertRow, 'max_matches' | 'timeout_ms'>, limits: AlertLimits): { maxMatches: number; timeoutMs: number } {
  return { maxMatches: Math.min(row.max_matches ?? limits.maxMatches, limits.maxMatches), timeoutMs: Math.min(row.timeout_ms ?? limits.maxRuntimeMs, limits.maxRuntimeMs) };
}

export function toAlert(row: AlertRow, queries: AlertQuery[], runs: AlertRunRecord[], limits: AlertLimits): Alert {
  return {
    id: row.id,
    sourceKey: row.source_key,
    title: row.title,
    description: row.description,
    enabled: row.enabled,
    cron: row.cron,
    columns: row.columns,
    queries,
    target: row.target,
    ...effectiveLimits(row, limits),
    lastRun: row.last_run_at?.toISOString() ?? null,
    nextRun: row.enabled ? (row.next_run_at?.toISOString() ?? null) : null,
    status: row.run_locked_until && row.run_locked_until.getTime() > Date.now() ? 'running' : 'idle',
    lastRunProblem: row.last_run_problems,
    runs,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed || trimmed.length > MAX_TITLE) throw invalidParameter(`title must be 1 to ${MAX_TITLE} characters`, 'title');
  return trimmed;
}

function checkDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION) throw invalidParameter(`description must be at most ${MAX_DESCRIPTION} characters`, 'description');
  return description;
}

function checkColumns(columns: AlertColumn[]): AlertColumn[] {
  if (columns.length > MAX_COLUMNS) throw invalidParameter(`columns must have at most ${MAX_COLUMNS} items`, 'columns');
  return columns.map((c, i) => {
    if (!COLUMN_TYPES.includes(c.type)) throw invalidParameter(`columns[${i}].type must be "string" or "number"`, `columns[${i}].type`);
    if (!c.columnTitle?.trim() || c.columnTitle.length > MAX_COLUMN_NAME) throw invalidParameter(`columns[${i}].columnTitle must be 1 to ${MAX_COLUMN_NAME} characters`, `columns[${i}].columnTitle`);
    if (!c.columnName || !VARIABLE.test(c.columnName)) throw invalidParameter(`columns[${i}].columnName must name a returned column (letters, digits and _)`, `columns[${i}].columnName`);
    return { type: c.type, columnTitle: c.columnTitle.trim(), columnName: c.columnName };
  });
}

function checkTarget(target: string | null): string | null {
  if (target === null || target === '') return null;
  if (!VARIABLE.test(target)) throw invalidParameter('target must name a returned variable (letters, digits and _)', 'target');
  return target;
}

function checkLimit(value: number | null | undefined, name: string, max: number, min: number): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < min || value > max) throw invalidParameter(`${name} must be an integer from ${min} to ${max} (the global limit)`, name);
  return value;
}

function checkQueryFields(q: QueryInput, at: string, partial: boolean): { name?: string; query?: string; description?: string } {
  const out: { name?: string; query?: string; description?: string } = {};
  if (q.dialect !== undefined && q.dialect !== 'cypher') throw invalidParameter(`${at}.dialect must be "cypher"`, `${at}.dialect`);
  if (q.name !== undefined || !partial) {
    const name = (q.name ?? '').trim();
    if (!name || name.length > MAX_QUERY_NAME) throw invalidParameter(`${at}.name must be 1 to ${MAX_QUERY_NAME} characters`, `${at}.name`);
    out.name = name;
  }
  if (q.query !== undefined || !partial) {
    const query = q.query ?? '';
    if (!query.trim() || query.length > MAX_QUERY_TEXT) throw invalidParameter(`${at}.query must be 1 to ${MAX_QUERY_TEXT} characters`, `${at}.query`);
    out.query = query;
  }
  if (q.description !== undefined) out.description = checkDescription(q.description);
  return out;
}

interface QueryRow {
  id: number;
  name: string;
  query: string;
  dialect: 'cypher';
  description: string;
}

export async function alertQueries(db: Queryable, alertId: number): Promise<AlertQuery[]> {
  const { rows } = await db.query<QueryRow>('SELECT id, name, query, dialect, description FROM alert_queries WHERE alert_id = $1 ORDER BY id', [alertId]);
  return rows;
}

interface RunRow {
  id: string;
  alert_id: number;
  trigger: 'schedule' | 'manual';
  outcome: 'ok' | 'partial' | 'failed';
  started_at: Date;
  duration_ms: number;
  rows_read: number;
  matches_new: number;
  matches_seen: number;
  cases_opened: number;
  events_emitted: number;
  problems: RunProblem[];
}

export async function alertRuns(db: Queryable, alertId: number, page: { offset: number; limit: number }): Promise<AlertRunRecord[]> {
  const { rows } = await db.query<RunRow>('SELECT * FROM alert_runs WHERE alert_id = $1 ORDER BY id DESC OFFSET $2 LIMIT $3', [alertId, page.offset, page.limit]);
  return rows.map(toRun);
}

function toRun(r: RunRow): AlertRunRecord {
  return {
    id: Number(r.id),
    trigger: r.trigger,
    outcome: r.outcome,
    startedAt: r.started_at.toISOString(),
    durationMs: r.duration_ms,
    rowsRead: r.rows_read,
    matchesNew: r.matches_new,
    matchesSeen: r.matches_seen,
    casesOpened: r.cases_opened,
    eventsEmitted: r.events_emitted,
    problems: r.problems,
  };
}

export async function loadAlert(db: Queryable, row: AlertRow, limits: AlertLimits): Promise<Alert> {
  return toAlert(row, await alertQueries(db, row.id), await alertRuns(db, row.id, { offset: 0, limit: MAX_RUNS_SHOWN }), limits);
}

/** Whether the source has a graph: only then may an alert carry queries. */
async function sourceHasGraph(db: Queryable, sourceKey: string): Promise<boolean> {
  const { rows } = await db.query<{ graph: unknown }>('SELECT graph FROM data_sources WHERE key = $1', [sourceKey]);
  return rows[0]?.graph !== null && rows[0]?.graph !== undefined;
}

/** When the alert's next scheduled run is due: its CRON's next time, if it is enabled, has queries and a CRON. */
function scheduleOf(enabled: boolean, cron: string | null, queryCount: number): Date | null {
  return enabled && cron && queryCount > 0 ? nextRunAfter(cron, new Date()) : null;
}

export async function createAlert(db: Database, sourceKey: string, input: AlertInput & { title: string }, limits: AlertLimits, check: QueryChecker, actor: Principal): Promise<Alert> {
  const title = checkTitle(input.title);
  const description = checkDescription(input.description ?? '');
  const cron = input.cron ? checkAlertCron(input.cron, limits.minIntervalMs) : null;
  const columns = checkColumns(input.columns ?? []);
  const target = checkTarget(input.target ?? null);
  const maxMatches = checkLimit(input.maxMatches, 'maxMatches', limits.maxMatches, 1);
  const timeoutMs = checkLimit(input.timeoutMs, 'timeoutMs', limits.maxRuntimeMs, 1000);
  if (input.queries && input.queries.length > MAX_QUERIES) throw invalidParameter(`queries must have at most ${MAX_QUERIES} items`, 'queries');
  const queries = (input.queries ?? []).map((q, i) => checkQueryFields(q, `queries[${i}]`, false) as { name: string; query: string; description?: string });
  await requireDataSources(db, [sourceKey]);
  if (queries.length && !(await sourceHasGraph(db, sourceKey))) throw noGraphForQueries(sourceKey);
  if (queries.length) await check(sourceKey, queries, target, columns, Math.min(timeoutMs ?? limits.maxRuntimeMs, limits.maxRuntimeMs));
  const id = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO alerts (source_key, title, description, enabled, cron, columns, target, max_matches, timeout_ms, next_run_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [sourceKey, title, description, input.enabled ?? true, cron, JSON.stringify(columns), target, maxMatches, timeoutMs, scheduleOf(input.enabled ?? true, cron, queries.length)],
    );
    await insertQueries(tx, rows[0]!.id, queries);
    await recordAudit(tx, actor, { action: 'alert.create', targetType: 'alert', targetId: rows[0]!.id, sourceKey, after: await auditedAlert(tx, rows[0]!.id) });
    return rows[0]!.id;
  });
  return loadAlert(db, await findAlert(db, sourceKey, id), limits);
}

async function insertQueries(tx: Transaction, alertId: number, queries: { name: string; query: string; description?: string }[]): Promise<void> {
  for (const q of queries) {
    await tx.query('INSERT INTO alert_queries (alert_id, name, query, description) VALUES ($1, $2, $3, $4)', [alertId, q.name, q.query, q.description ?? '']);
  }
}

function noGraphForQueries(sourceKey: string): AppError {
  return invalidParameter(`queries: data source "${sourceKey}" has no graph to run them on; give it one (PATCH /api/admin/sources/${sourceKey}), or report matches with POST …/matches`, 'queries');
}

/**
 * Changes an alert. `queries` takes LKE's operations (create, update with `id`, delete with `id`). Editing a query
 * keeps the alert's cases (LKE deletes them): matches are judged new or seen by identity, whatever query found them.
 */
export async function updateAlert(db: Database, sourceKey: string, id: number, changes: AlertInput, limits: AlertLimits, check: QueryChecker, actor: Principal): Promise<Alert> {
  const before = await findAlert(db, sourceKey, id);
  const title = changes.title === undefined ? before.title : checkTitle(changes.title);
  const description = changes.description === undefined ? before.description : checkDescription(changes.description);
  const cron = changes.cron === undefined ? before.cron : changes.cron ? checkAlertCron(changes.cron, limits.minIntervalMs) : null;
  const columns = changes.columns === undefined ? before.columns : checkColumns(changes.columns);
  const target = changes.target === undefined ? before.target : checkTarget(changes.target);
  const maxMatches = changes.maxMatches === undefined ? before.max_matches : checkLimit(changes.maxMatches, 'maxMatches', limits.maxMatches, 1);
  const timeoutMs = changes.timeoutMs === undefined ? before.timeout_ms : checkLimit(changes.timeoutMs, 'timeoutMs', limits.maxRuntimeMs, 1000);
  const enabled = changes.enabled ?? before.enabled;

  const current = await alertQueries(db, id);
  const next = new Map(current.map((q) => [q.id, { ...q } as { id?: number; name: string; query: string; description: string }]));
  const created: { name: string; query: string; description?: string }[] = [];
  (changes.queries ?? []).forEach((q, i) => {
    const at = `queries[${i}]`;
    const operation = q.operation ?? (q.id === undefined ? 'create' : 'update');
    if (operation === 'create') {
      created.push(checkQueryFields(q, at, false) as { name: string; query: string; description?: string });
      return;
    }
    if (q.id === undefined || !next.has(q.id)) throw invalidParameter(`${at}.id must name a query of this alert to ${operation} it`, `${at}.id`);
    if (operation === 'delete') next.delete(q.id);
    else Object.assign(next.get(q.id)!, checkQueryFields(q, at, true));
  });
  const all = [...next.values(), ...created];
  if (all.length > MAX_QUERIES) throw invalidParameter(`queries: an alert has at most ${MAX_QUERIES}`, 'queries');
  if (all.length && !(await sourceHasGraph(db, sourceKey))) throw noGraphForQueries(sourceKey);
  const queriesChanged = changes.queries !== undefined && changes.queries.length > 0;
  if (all.length && (queriesChanged || changes.target !== undefined || changes.columns !== undefined)) {
    await check(sourceKey, all, target, columns, Math.min(timeoutMs ?? limits.maxRuntimeMs, limits.maxRuntimeMs));
  }
  await db.transaction(async (tx) => {
    // Locked: the audit's `before` is the state this change replaces (an alert deleted meanwhile is not changed).
    const previous = await auditedAlert(tx, id, true);
    if (!previous) throw notFound('alert', id);
    // A new CRON, or the alert enabled again, starts its schedule afresh; otherwise the next run stays when it was.
    const reschedule = changes.cron !== undefined || changes.enabled !== undefined || queriesChanged;
    await tx.query(
      `UPDATE alerts SET title = $3, description = $4, enabled = $5, cron = $6, columns = $7, target = $8, max_matches = $9, timeout_ms = $10,
         next_run_at = CASE WHEN $11 THEN $12 ELSE next_run_at END, updated_at = now()
       WHERE id = $1 AND source_key = $2`,
      [id, sourceKey, title, description, enabled, cron, JSON.stringify(columns), target, maxMatches, timeoutMs, reschedule, scheduleOf(enabled, cron, all.length)],
    );
    for (const q of current) {
      const kept = next.get(q.id);
      if (!kept) await tx.query('DELETE FROM alert_queries WHERE id = $1', [q.id]);
      else if (kept.name !== q.name || kept.query !== q.query || kept.description !== q.description) {
        await tx.query('UPDATE alert_queries SET name = $2, query = $3, description = $4, updated_at = now() WHERE id = $1', [q.id, kept.name, kept.query, kept.description]);
      }
    }
    await insertQueries(tx, id, created);
    const changed = await auditedAlert(tx, id);
    // A change that changed nothing (the values it already had) is no one's doing to account for.
    if (JSON.stringify(changed) !== JSON.stringify(previous)) {
      await recordAudit(tx, actor, { action: 'alert.update', targetType: 'alert', targetId: id, sourceKey, before: previous, after: changed });
    }
  });
  return loadAlert(db, await findAlert(db, sourceKey, id), limits);
}

/** The alert, or 404 when it does not exist in that data source (400 when the source itself does not). */
export async function findAlert(db: Queryable, sourceKey: string, id: number, lock = false): Promise<AlertRow> {
  const { rows } = await db.query<AlertRow>(`SELECT * FROM alerts WHERE id = $1 AND source_key = $2${lock ? ' FOR SHARE' : ''}`, [id, sourceKey]);
  if (rows[0]) return rows[0];
  await requireDataSources(db, [sourceKey]);
  throw notFound('alert', id);
}

/**
 * One page of the alerts of a data source, oldest first, and how many it has: `offset` and `limit` as LKE's client
 * sends them (query parameters), the limit bounded by the route (MAX_PAGE_SIZE).
 */
export async function listAlerts(
  db: Queryable,
  sourceKey: string,
  limits: AlertLimits,
  page: { offset: number; limit: number },
  readable: 'all' | ReadonlySet<number> = 'all',
): Promise<{ totalCount: number; items: Alert[] }> {
  await requireDataSources(db, [sourceKey]);
  // Only the alerts the caller may read (src/access/source-access.ts): the others are in neither the page nor the count.
  const only = readable === 'all' ? null : [...readable];
  const { rows } = await db.query<AlertRow>(
    'SELECT * FROM alerts WHERE source_key = $1 AND ($4::int[] IS NULL OR id = ANY($4::int[])) ORDER BY id OFFSET $2 LIMIT $3',
    [sourceKey, page.offset, page.limit, only],
  );
  const total = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM alerts WHERE source_key = $1 AND ($2::int[] IS NULL OR id = ANY($2::int[]))', [
    sourceKey,
    only,
  ]);
  const ids = rows.map((row) => row.id);
  const queries = await db.query<QueryRow & { alert_id: number }>('SELECT * FROM alert_queries WHERE alert_id = ANY($1::int[]) ORDER BY id', [ids]);
  const byAlert = new Map<number, AlertQuery[]>();
  for (const q of queries.rows) {
    const list = byAlert.get(q.alert_id) ?? [];
    list.push({ id: q.id, name: q.name, query: q.query, dialect: q.dialect, description: q.description });
    byAlert.set(q.alert_id, list);
  }
  // The list shows the last run of each alert (in `runs`, its only one; the history is on GET one) and how many
  // cases it has in each status: one statement each for all the alerts, each bounded by an index per alert.
  const lastRuns = await db.query<RunRow>(
    `SELECT r.* FROM unnest($1::int[]) AS a(id)
     CROSS JOIN LATERAL (SELECT * FROM alert_runs WHERE alert_id = a.id ORDER BY id DESC LIMIT 1) r`,
    [ids],
  );
  const lastRunOf = new Map(lastRuns.rows.map((run) => [run.alert_id, toRun(run)]));
  const counts = await db.query<{ alert_id: number; status: CaseStatus; count: number }>(
    'SELECT alert_id, status, count(*) AS count FROM cases WHERE alert_id = ANY($1::int[]) GROUP BY alert_id, status',
    [ids],
  );
  const countsOf = new Map(ids.map((id) => [id, { unconfirmed: 0, confirmed: 0, dismissed: 0, 'in-progress': 0 } as Record<CaseStatus, number>]));
  for (const row of counts.rows) countsOf.get(row.alert_id)![row.status] = row.count;
  const items = rows.map((row) => {
    const run = lastRunOf.get(row.id);
    return { ...toAlert(row, byAlert.get(row.id) ?? [], run ? [run] : [], limits), caseCounts: countsOf.get(row.id)! };
  });
  return { totalCount: total.rows[0]?.count ?? 0, items };
}

/** Deletes an alert (its cases go with it, by the foreign keys) and records who did, in one transaction. */
export async function deleteAlert(db: Database, sourceKey: string, id: number, actor: Principal): Promise<void> {
  await db.transaction(async (tx) => {
    await findAlert(tx, sourceKey, id);
    const previous = await auditedAlert(tx, id, true);
    if (!previous) throw notFound('alert', id);
    await tx.query('DELETE FROM alerts WHERE id = $1', [id]);
    await recordAudit(tx, actor, { action: 'alert.delete', targetType: 'alert', targetId: id, sourceKey, before: previous });
  });
}
