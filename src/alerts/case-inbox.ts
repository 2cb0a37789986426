/**
 * The analysts' case inbox (issue 40): every case the caller may read, across alerts and data sources, filtered,
 * sorted and paged by a keyset cursor. How a page is read, and why, is under `inboxStatement`; what it costs at
 * 1,000,000 cases is in bench/README.md ("Case inbox").
 */
import { loadAlertScope, scopeReads } from '../access/alert-scope.js';
import { visibleSourceKeys } from '../access/source-access.js';
import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { AppError, invalidParameter } from '../errors.js';
import { MAX_INT4 } from '../http/schemas.js';
import { instantOf } from '../http/time-range.js';
import { caseUrl } from './case-url.js';
import {
  COLUMN_FILTER_PREFIX,
  DEFAULT_INBOX_PAGE,
  INBOX_SORTS,
  MAX_COLUMN_FILTERS,
  SORT_DIRECTIONS,
  type InboxCase,
  type InboxPage,
  type InboxSort,
  type SortDirection,
} from './inbox-schemas.js';
import { CASE_STATUSES, MAX_COLUMN_NAME, type AlertColumn, type CaseStatus } from './schemas.js';

/** A range of instants: `from` included, `to` excluded (as `since`/`until` elsewhere in the API). */
export interface InstantRange {
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Where the previous page ended: its last case's sort key (µs text; none for `id`) and id, and, sorted by update, when the first page was read. */
export interface InboxCursor {
  key?: string | undefined;
  id: number;
  asOf?: string | undefined;
}

export interface ColumnFilter {
  name: string;
  type: AlertColumn['type'];
  value: string;
}

/** What one page is read from: filters resolved to the alerts they cover, ready for a statement. */
export interface InboxSearch {
  /** The alerts whose cases may be answered: every alert, or these (the caller's scope and filters together). */
  alertIds: 'all' | readonly number[];
  /** Only these statuses; undefined for all of them. */
  statuses?: readonly CaseStatus[] | undefined;
  /** Unassigned cases, or those of one user. */
  assignee?: 'none' | number | undefined;
  created: InstantRange;
  updated: InstantRange;
  columns: readonly ColumnFilter[];
  sort: InboxSort;
  direction: SortDirection;
  limit: number;
  cursor?: InboxCursor | undefined;
}

/**
 * How a page is read. Each plan reads the sort's index in order and stops after the page, so the page costs what
 * the plan reads, not what the inbox holds:
 *  - `merge`: one ordered walk of `cases_alert_status_<sort>` (alert, status, key, id) per alert and status, each
 *    stopped after a page, and the best page of them all. At most (alerts × statuses) × (limit + 1) index entries,
 *    whatever the filters keep: a custom group's few alerts, one alert, a rare status all cost the same.
 *  - `window`: the next WINDOW_PAGES × (limit + 1) cases in the order of the whole inbox (`cases_<sort>`, key and id),
 *    the filters checked on them. A page as soon as a twentieth of the cases read match; else the merge reads it.
 *  - `direct`: one statement over the inbox, its plan the planner's; used for one user's cases, which it reads through
 *    `cases_assignee` (user, updated_at, id): a person's workload, read in order by update, sorted otherwise.
 */
export type InboxPlan = 'merge' | 'window' | 'direct';

/** The window reads this many pages' worth of cases in the inbox's order before the merge takes over. */
export const WINDOW_PAGES = 20;

// Each sort's column; `id` is its own key (no second column to break ties).
const KEY_COLUMN: Record<InboxSort, string> = { updatedAt: 'updated_at', createdAt: 'created_at', id: 'id' };
const MICROSECONDS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
const DAY_MS = 86_400_000;
const CURSOR_KEY = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** The plan `search` is read with first; `window` may hand over to `merge` (readInboxPage). */
export function firstPlan(search: InboxSearch): InboxPlan {
  if (typeof search.assignee === 'number') return 'direct';
  if (search.alertIds === 'all') return 'window';
  const partitions = search.alertIds.length * (search.statuses ?? CASE_STATUSES).length;
  return partitions <= WINDOW_PAGES ? 'merge' : 'window';
}

/**
 * The statement that reads one page of `search` with `plan` (for `merge`, `search.alertIds` must be a list): the
 * page's case ids in order (at most limit + 1: whether there is a next page, without counting), then their rows,
 * alert, users and newest match's columns, for those ids only.
 */
export function inboxStatement(search: InboxSearch, plan: InboxPlan): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const parameter = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const parts: StatementParts = { search, key: KEY_COLUMN[search.sort], timed: search.sort !== 'id', parameter };
  const limit = parameter(search.limit + 1);
  const page = pageQuery(parts, plan, limit);
  const text = `SELECT c.id, a.source_key, c.alert_id, a.title AS alert_title, c.status, c.status_updated_at,
      c.status_user_id, su.username AS status_username, su.email AS status_email,
      c.assigned_user_id, au.username AS assigned_username, au.email AS assigned_email,
      c.match_count, c.created_at, c.updated_at, m.columns,
      ${parts.timed ? `to_char(page.key AT TIME ZONE 'UTC', ${MICROSECONDS})` : 'NULL'} AS cursor_key,
      to_char(statement_timestamp() AT TIME ZONE 'UTC', ${MICROSECONDS}) AS read_at
    FROM (${page}) page
    JOIN cases c ON c.id = page.id
    JOIN alerts a ON a.id = c.alert_id
    LEFT JOIN users su ON su.id = c.status_user_id
    LEFT JOIN users au ON au.id = c.assigned_user_id
    LEFT JOIN LATERAL (SELECT columns FROM alert_matches WHERE case_id = c.id ORDER BY created_at DESC LIMIT 1) m ON true
    ORDER BY ${orderBy(parts, 'page.key', 'page.id')}`;
  return { text, values };
}

/** What the parts of one statement share: the search, its sort, and how a part adds a value to the statement's. */
interface StatementParts {
  search: InboxSearch;
  /** The sort's column. */
  key: string;
  /** Sorted by a time, with the id to break ties; else by the id alone. */
  timed: boolean;
  /** Adds a value to the statement's values, answering its placeholder (`$3`). */
  parameter: (value: unknown) => string;
}

/** The statement's order, by the sort's key then the id, in the search's direction. */
function orderBy({ search, timed }: StatementParts, keyExpression: string, id: string): string {
  return timed ? `${keyExpression} ${search.direction}, ${id} ${search.direction}` : `${id} ${search.direction}`;
}

function where(conditions: string[]): string {
  return conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
}

/** The query of the page's case ids and sort keys (`id`, `key`), in order, with `plan`. */
function pageQuery(parts: StatementParts, plan: InboxPlan, limit: string): string {
  const { search, key, parameter } = parts;
  if (plan === 'merge') {
    if (search.alertIds === 'all') throw new Error('the merge plan reads a list of alerts');
    const alerts = parameter(search.alertIds);
    const statuses = parameter(search.statuses ?? CASE_STATUSES);
    return `SELECT p.id, p.key FROM unnest(${alerts}::int[]) AS a(id) CROSS JOIN unnest(${statuses}::text[]) AS s(status)
      CROSS JOIN LATERAL (
        SELECT c.id, c.${key} AS key FROM cases c
        ${where([`c.alert_id = a.id`, `c.status = s.status`, ...keyRange(parts, 'c'), ...caseFilters(parts, 'c', true)])}
        ORDER BY ${orderBy(parts, `c.${key}`, 'c.id')} LIMIT ${limit}) p
      ORDER BY ${orderBy(parts, 'p.key', 'p.id')} LIMIT ${limit}`;
  }
  if (plan === 'window') {
    const window = parameter((search.limit + 1) * WINDOW_PAGES);
    return `SELECT w.id, w.${key} AS key FROM (
        SELECT c.id, c.alert_id, c.status, c.assigned_user_id, c.created_at, c.updated_at FROM cases c
        ${where(keyRange(parts, 'c'))} ORDER BY ${orderBy(parts, `c.${key}`, 'c.id')} LIMIT ${window}) w
      ${where(caseFilters(parts, 'w', false))}
      ORDER BY ${orderBy(parts, `w.${key}`, 'w.id')} LIMIT ${limit}`;
  }
  return `SELECT c.id, c.${key} AS key FROM cases c
      ${where([...keyRange(parts, 'c'), ...caseFilters(parts, 'c', false)])}
      ORDER BY ${orderBy(parts, `c.${key}`, 'c.id')} LIMIT ${limit}`;
}

/** Conditions on the sort key alone: the walk starts and ends by them (an index range, not a filter). */
function keyRange(parts: StatementParts, alias: string): string[] {
  const { search, key, timed, parameter } = parts;
  const conditions: string[] = [];
  const range = search.sort === 'updatedAt' ? search.updated : search.sort === 'createdAt' ? search.created : {};
  if (range.from) conditions.push(`${alias}.${key} >= ${parameter(range.from)}`);
  if (range.to) conditions.push(`${alias}.${key} < ${parameter(range.to)}`);
  // The other date's range bounds the walk too: a case is updated when, or after, it is created (both are now() of
  // the transaction that wrote them; a day's margin covers a writer that began before the case's creation committed).
  // Cases created this week, sorted by update, are then read among those updated since, not among all.
  if (search.sort === 'updatedAt' && search.created.from) conditions.push(`${alias}.updated_at >= ${parameter(new Date(search.created.from.getTime() - DAY_MS))}`);
  if (search.sort === 'createdAt' && search.updated.to) conditions.push(`${alias}.created_at < ${parameter(new Date(search.updated.to.getTime() + DAY_MS))}`);
  const cursor = search.cursor;
  if (cursor) {
    const less = search.direction === 'desc' ? '<' : '>';
    if (timed) conditions.push(`(${alias}.${key}, ${alias}.id) ${less} (${parameter(cursor.key)}::timestamptz, ${parameter(cursor.id)}::int)`);
    else conditions.push(`${alias}.id ${less} ${parameter(cursor.id)}::int`);
    // Sorted by update, oldest first: a case updated after the first page would come again at the end. (A change
    // whose transaction began before the first page was read and committed after it carries an earlier time, and
    // may still: a window of one transaction's length.)
    if (cursor.asOf !== undefined && search.sort === 'updatedAt') conditions.push(`${alias}.updated_at <= ${parameter(cursor.asOf)}::timestamptz`);
  }
  return conditions;
}

/**
 * The other filters, checked on each case the walk reads; `partitioned` when the walk is one alert's and one
 * status's already (the merge's), which need no check then.
 */
function caseFilters(parts: StatementParts, alias: string, partitioned: boolean): string[] {
  const { search, key, parameter } = parts;
  const conditions: string[] = [];
  if (!partitioned && search.alertIds !== 'all') conditions.push(`${alias}.alert_id = ANY(${parameter(search.alertIds)}::int[])`);
  if (!partitioned && search.statuses) conditions.push(`${alias}.status = ANY(${parameter(search.statuses)}::text[])`);
  if (search.assignee === 'none') conditions.push(`${alias}.assigned_user_id IS NULL`);
  else if (search.assignee !== undefined) conditions.push(`${alias}.assigned_user_id = ${parameter(search.assignee)}::int`);
  const ranges = { created_at: search.created, updated_at: search.updated } as const;
  for (const [column, range] of Object.entries(ranges)) {
    if (column === key) continue;
    if (range.from) conditions.push(`${alias}.${column} >= ${parameter(range.from)}`);
    if (range.to) conditions.push(`${alias}.${column} < ${parameter(range.to)}`);
  }
  for (const column of search.columns) conditions.push(columnCondition(parameter, alias, column));
  return conditions;
}

/** The newest match's value (alert_matches_case: one probe); a number column compares as numbers (9500 = 9500.0). */
function columnCondition(parameter: StatementParts['parameter'], alias: string, column: ColumnFilter): string {
  const newest = (operator: string) =>
    `(SELECT m.columns ${operator} ${parameter(column.name)}::text FROM alert_matches m WHERE m.case_id = ${alias}.id ORDER BY m.created_at DESC LIMIT 1)`;
  if (column.type === 'number') return `${newest('->')} = to_jsonb(${parameter(column.value)}::numeric)`;
  return `${newest('->>')} = ${parameter(column.value)}`;
}

interface InboxRow {
  id: number;
  source_key: string;
  alert_id: number;
  alert_title: string;
  status: CaseStatus;
  status_updated_at: Date | null;
  status_user_id: number | null;
  status_username: string | null;
  status_email: string | null;
  assigned_user_id: number | null;
  assigned_username: string | null;
  assigned_email: string | null;
  match_count: number;
  created_at: Date;
  updated_at: Date;
  columns: Record<string, unknown> | null;
  cursor_key: string | null;
  read_at: string;
}

/** One page of `search`: the first plan, and the merge when a window did not hold a page. */
export async function readInboxPage(db: Queryable, search: InboxSearch, publicBaseUrl: string): Promise<InboxPage> {
  if (search.alertIds !== 'all' && search.alertIds.length === 0) return { items: [], nextCursor: null };
  const plan = firstPlan(search);
  let rows = await run(db, search, plan);
  if (plan === 'window' && rows.length <= search.limit) {
    const alertIds = search.alertIds === 'all' ? (await db.query<{ id: number }>('SELECT id FROM alerts ORDER BY id')).rows.map((row) => row.id) : search.alertIds;
    rows = alertIds.length === 0 ? [] : await run(db, { ...search, alertIds }, 'merge');
  }
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  let nextCursor: string | null = null;
  if (rows.length > search.limit && last) {
    const asOf = search.sort === 'updatedAt' ? (search.cursor?.asOf ?? last.read_at) : undefined;
    nextCursor = encodeCursor(search, { key: last.cursor_key ?? undefined, id: last.id, asOf });
  }
  return { items: page.map((row) => toInboxCase(row, publicBaseUrl)), nextCursor };
}

async function run(db: Queryable, search: InboxSearch, plan: InboxPlan): Promise<InboxRow[]> {
  const { text, values } = inboxStatement(search, plan);
  return (await db.query<InboxRow>(text, values)).rows;
}

function toInboxCase(row: InboxRow, publicBaseUrl: string): InboxCase {
  const kase: InboxCase = {
    id: row.id,
    sourceKey: row.source_key,
    alertId: row.alert_id,
    alertTitle: row.alert_title,
    status: row.status,
    matchCount: row.match_count,
    url: caseUrl(publicBaseUrl, row.alert_id, row.id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    columns: row.columns ?? {},
  };
  if (row.status_updated_at) kase.statusUpdateDate = row.status_updated_at.toISOString();
  if (row.status_user_id !== null && row.status_username !== null) kase.user = { id: row.status_user_id, username: row.status_username, email: row.status_email ?? '' };
  if (row.assigned_user_id !== null && row.assigned_username !== null) {
    kase.assignedUser = { id: row.assigned_user_id, username: row.assigned_username, email: row.assigned_email ?? '' };
  }
  return kase;
}

// The cursor: opaque to clients (base64url of JSON), checked when it comes back. It carries the sort it was made for,
// so a cursor passed with another sort is refused rather than read as a position it is not.
interface CursorText {
  s: InboxSort;
  d: SortDirection;
  k?: string;
  i: number;
  t?: string;
}

function encodeCursor(search: InboxSearch, cursor: InboxCursor): string {
  const text: CursorText = { s: search.sort, d: search.direction, i: cursor.id, ...(cursor.key ? { k: cursor.key } : {}), ...(cursor.asOf ? { t: cursor.asOf } : {}) };
  return Buffer.from(JSON.stringify(text)).toString('base64url');
}

/** A cursor a page answered, as the next page's search takes it; 400 naming `cursor` for anything else. */
export function decodeCursor(cursor: string, sort: InboxSort, direction: SortDirection): InboxCursor {
  const refuse = (why: string) => invalidParameter(`query parameter cursor ${why}: pass the nextCursor of the previous page, with the same sort and direction`, 'cursor');
  let text: Partial<CursorText>;
  try {
    text = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorText>;
  } catch {
    throw refuse('is not a cursor of the inbox');
  }
  if (typeof text !== 'object' || text === null || !Number.isInteger(text.i) || text.i! < 1 || text.i! > MAX_INT4) throw refuse('is not a cursor of the inbox');
  if (text.s !== sort || text.d !== direction) throw refuse(`was made for sort=${String(text.s)}&direction=${String(text.d)}`);
  const timed = sort !== 'id';
  if (timed !== (typeof text.k === 'string' && CURSOR_KEY.test(text.k))) throw refuse('is not a cursor of the inbox');
  if (text.t !== undefined && (sort !== 'updatedAt' || typeof text.t !== 'string' || !CURSOR_KEY.test(text.t))) throw refuse('is not a cursor of the inbox');
  return { key: text.k, id: text.i!, asOf: text.t };
}

/** The query of GET /api/cases, each parameter checked (400 naming it), before anything is read. */
export interface InboxRequest {
  statuses?: CaseStatus[];
  sourceKey?: string;
  alertId?: number;
  assignee?: 'none' | number;
  created: InstantRange;
  updated: InstantRange;
  /** Column filters as given, checked against the alert's columns once it is read. */
  columns: { name: string; value: string }[];
  sort: InboxSort;
  direction: SortDirection;
  limit: number;
  cursor?: InboxCursor;
}

const KNOWN_PARAMETERS = new Set(['status', 'sourceKey', 'alertId', 'assignee', 'createdFrom', 'createdTo', 'updatedFrom', 'updatedTo', 'sort', 'direction', 'limit', 'cursor']);

/** The route's schema has checked each parameter's type and size; these are the rules it cannot say. */
export function parseInboxQuery(query: Record<string, unknown>, caller: Principal): InboxRequest {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const columns: { name: string; value: string }[] = [];
  for (const name of Object.keys(query)) {
    if (KNOWN_PARAMETERS.has(name)) continue;
    if (!name.startsWith(COLUMN_FILTER_PREFIX)) {
      throw invalidParameter(`query parameter ${name.slice(0, 60)} is not allowed (filters: ${[...KNOWN_PARAMETERS].join(', ')}, ${COLUMN_FILTER_PREFIX}<name>)`, name.slice(0, 60));
    }
    columns.push({ name: name.slice(COLUMN_FILTER_PREFIX.length), value: String(query[name]) });
  }
  if (columns.length > MAX_COLUMN_FILTERS) throw invalidParameter(`at most ${MAX_COLUMN_FILTERS} ${COLUMN_FILTER_PREFIX}<name> query parameters may be given`, `${COLUMN_FILTER_PREFIX}${columns[0]!.name}`);
  for (const column of columns) {
    if (!column.name) throw invalidParameter(`query parameter ${COLUMN_FILTER_PREFIX} must name a column: ${COLUMN_FILTER_PREFIX}<name>=<value>`, COLUMN_FILTER_PREFIX);
    if (column.name.length > MAX_COLUMN_NAME) {
      throw invalidParameter(`query parameter ${COLUMN_FILTER_PREFIX}<name> must name a column of at most ${MAX_COLUMN_NAME} characters`, `${COLUMN_FILTER_PREFIX}${column.name.slice(0, 40)}`);
    }
    if (query.alertId === undefined) {
      throw invalidParameter(`query parameter ${COLUMN_FILTER_PREFIX}${column.name} needs alertId: columns are an alert's own`, `${COLUMN_FILTER_PREFIX}${column.name}`);
    }
  }

  const request: InboxRequest = {
    created: instantRange(text('createdFrom'), text('createdTo'), 'created'),
    updated: instantRange(text('updatedFrom'), text('updatedTo'), 'updated'),
    columns,
    sort: (text('sort') as InboxSort | undefined) ?? INBOX_SORTS[0],
    direction: (text('direction') as SortDirection | undefined) ?? SORT_DIRECTIONS[0],
    limit: typeof query.limit === 'number' ? query.limit : DEFAULT_INBOX_PAGE,
  };
  const status = text('status');
  if (status !== undefined) {
    const statuses = [...new Set(status.split(','))];
    const wrong = statuses.find((s) => !(CASE_STATUSES as readonly string[]).includes(s));
    if (wrong !== undefined) {
      throw invalidParameter(`query parameter status must be a comma-separated list of ${CASE_STATUSES.join(', ')}; ${JSON.stringify(wrong.slice(0, 40))} is none of them`, 'status');
    }
    request.statuses = statuses as CaseStatus[];
  }
  if (text('sourceKey') !== undefined) request.sourceKey = text('sourceKey');
  if (typeof query.alertId === 'number') request.alertId = query.alertId;
  const assignee = text('assignee');
  if (assignee === 'me') request.assignee = caller.userId;
  else if (assignee === 'none') request.assignee = 'none';
  else if (assignee !== undefined) {
    const userId = Number(assignee);
    if (userId > MAX_INT4) throw invalidParameter(`query parameter assignee must be me, none or a user id (at most ${MAX_INT4})`, 'assignee');
    request.assignee = userId;
  }
  const cursor = text('cursor');
  if (cursor !== undefined) request.cursor = decodeCursor(cursor, request.sort, request.direction);
  return request;
}

function instantRange(fromText: string | undefined, toText: string | undefined, what: 'created' | 'updated'): InstantRange {
  const from = instantOf(fromText, `${what}From`, 'query parameter');
  const to = instantOf(toText, `${what}To`, 'query parameter');
  if (from && to && from >= to) throw invalidParameter(`query parameter ${what}From must be before query parameter ${what}To`, `${what}From`);
  return { from, to };
}

/**
 * The search a request makes for `caller`: its filters narrowed to the alerts the caller may read. A source or an
 * alert they may not read answers as one that does not exist (the same words for both).
 */
export async function inboxSearchOf(db: Queryable, caller: Principal, request: InboxRequest): Promise<InboxSearch> {
  const scope = await loadAlertScope(db, caller);
  const { sourceKey, alertId } = request;
  if (sourceKey !== undefined) {
    const visible = scope === 'all' ? (await db.query('SELECT 1 FROM data_sources WHERE key = $1', [sourceKey])).rows.length > 0 : await sourceSeen(db, caller, sourceKey);
    if (!visible) throw new AppError('dataSource_unavailable', `no data source has the key "${sourceKey}"`, undefined, 'sourceKey');
  }
  let alertIds: 'all' | readonly number[] = scope === 'all' ? 'all' : [...scope];
  let columns: ColumnFilter[] = [];
  if (alertId !== undefined) {
    const { rows } = await db.query<{ source_key: string; columns: AlertColumn[] }>('SELECT source_key, columns FROM alerts WHERE id = $1', [alertId]);
    const alert = rows[0];
    if (!alert || !scopeReads(scope, alertId) || (sourceKey !== undefined && alert.source_key !== sourceKey)) {
      throw invalidParameter(`query parameter alertId: alert ${alertId} was not found${sourceKey === undefined ? '' : ` in data source "${sourceKey}"`}`, 'alertId');
    }
    alertIds = [alertId];
    columns = request.columns.map((filter) => columnFilter(alertId, alert.columns, filter));
  } else if (sourceKey !== undefined) {
    const { rows } = await db.query<{ id: number }>('SELECT id FROM alerts WHERE source_key = $1 ORDER BY id', [sourceKey]);
    alertIds = rows.map((row) => row.id).filter((id) => scopeReads(scope, id));
  }
  return {
    alertIds,
    statuses: request.statuses,
    assignee: request.assignee,
    created: request.created,
    updated: request.updated,
    columns,
    sort: request.sort,
    direction: request.direction,
    limit: request.limit,
    cursor: request.cursor,
  };
}

/** GET /api/cases for `caller`: its query checked, narrowed to the alerts the caller may read, and the page read. */
export async function readInbox(db: Queryable, caller: Principal, query: Record<string, unknown>, publicBaseUrl: string): Promise<InboxPage> {
  const search = await inboxSearchOf(db, caller, parseInboxQuery(query, caller));
  return readInboxPage(db, search, publicBaseUrl);
}

async function sourceSeen(db: Queryable, caller: Principal, sourceKey: string): Promise<boolean> {
  const sources = await visibleSourceKeys(db, caller);
  return sources === 'all' || sources.has(sourceKey);
}

function columnFilter(alertId: number, columns: readonly AlertColumn[], filter: { name: string; value: string }): ColumnFilter {
  const field = `${COLUMN_FILTER_PREFIX}${filter.name}`;
  const column = columns.find((c) => c.columnName === filter.name);
  if (!column) {
    const names = columns.map((c) => c.columnName).join(', ');
    throw invalidParameter(`query parameter ${field}: alert ${alertId} has no column of that name (${names ? `its columns: ${names}` : 'it has no columns'})`, field);
  }
  if (column.type === 'number' && (filter.value.trim() === '' || !Number.isFinite(Number(filter.value)))) {
    throw invalidParameter(`query parameter ${field} must be a number: the column is a number column`, field);
  }
  return { name: column.columnName, type: column.type, value: column.type === 'number' ? String(Number(filter.value)) : filter.value };
}
