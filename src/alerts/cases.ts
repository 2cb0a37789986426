import type { Queryable } from '../db/database.js';
import { notFound } from '../errors.js';
import { findAlert } from './alerts.js';
import { listCaseActions, type CaseActionRecord } from './case-actions.js';
import { caseUrl } from './case-url.js';
import type { Case, CaseList, CaseMatch, CaseStatus } from './schemas.js';

export type { Case } from './schemas.js';

export interface CaseRow {
  id: number;
  alert_id: number;
  source_key: string;
  hash: string;
  status: CaseStatus;
  status_updated_at: Date | null;
  status_user_id: number | null;
  status_username: string | null;
  status_email: string | null;
  assigned_user_id: number | null;
  assigned_username: string | null;
  assigned_email: string | null;
  nodes: string[];
  edges: string[];
  match_count: number;
  created_at: Date;
  updated_at: Date;
}

const SELECT_CASE = `
  SELECT c.id, c.alert_id, a.source_key, c.hash, c.status, c.status_updated_at, c.status_user_id,
         u.username AS status_username, u.email AS status_email, c.assigned_user_id, au.username AS assigned_username, au.email AS assigned_email,
         c.nodes, c.edges, c.match_count, c.created_at, c.updated_at
  FROM cases c JOIN alerts a ON a.id = c.alert_id LEFT JOIN users u ON u.id = c.status_user_id LEFT JOIN users au ON au.id = c.assigned_user_id`;

export function toCase(row: CaseRow, publicBaseUrl: string): Case {
  const kase: Case = {
    id: row.id,
    sourceKey: row.source_key,
    alertId: row.alert_id,
    hash: row.hash,
    status: row.status,
    nodes: row.nodes,
    edges: row.edges,
    matchCount: row.match_count,
    url: caseUrl(publicBaseUrl, row.alert_id, row.id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (row.status_updated_at) kase.statusUpdateDate = row.status_updated_at.toISOString();
  if (row.status_user_id !== null && row.status_username !== null) {
    kase.user = { id: row.status_user_id, username: row.status_username, email: row.status_email ?? '' };
  }
  if (row.assigned_user_id !== null && row.assigned_username !== null) {
    kase.assignedUser = { id: row.assigned_user_id, username: row.assigned_username, email: row.assigned_email ?? '' };
  }
  return kase;
}

export async function findCase(db: Queryable, alertId: number, caseId: number): Promise<CaseRow> {
  const { rows } = await db.query<CaseRow>(`${SELECT_CASE} WHERE c.id = $1 AND c.alert_id = $2`, [caseId, alertId]);
  if (!rows[0]) throw notFound('case', caseId);
  return rows[0];
}

export type StatusCounts = Record<CaseStatus, number>;

export async function listCases(
  db: Queryable,
  alertId: number,
  page: { offset: number; limit: number; status?: CaseStatus | undefined },
): Promise<{ counts: StatusCounts; rows: CaseRow[] }> {
  const { rows: countRows } = await db.query<{ status: CaseStatus; count: number }>(
    'SELECT status, count(*) AS count FROM cases WHERE alert_id = $1 GROUP BY status',
    [alertId],
  );
  const counts: StatusCounts = { unconfirmed: 0, confirmed: 0, dismissed: 0, 'in-progress': 0 };
  for (const row of countRows) counts[row.status] = row.count;
  // Newest case first.
  const { rows } = await db.query<CaseRow>(
    `${SELECT_CASE} WHERE c.alert_id = $1 AND ($2::text IS NULL OR c.status = $2) ORDER BY c.id DESC OFFSET $3 LIMIT $4`,
    [alertId, page.status ?? null, page.offset, page.limit],
  );
  return { counts, rows };
}

/** The column values of each case's newest match, for a page of cases: one statement, one index probe a case. */
export async function newestColumns(db: Queryable, caseIds: readonly number[]): Promise<Map<number, Record<string, unknown>>> {
  const { rows } = await db.query<{ case_id: number; columns: Record<string, unknown> }>(
    `SELECT c.id AS case_id, m.columns FROM unnest($1::int[]) AS c(id)
     CROSS JOIN LATERAL (SELECT columns FROM alert_matches WHERE case_id = c.id ORDER BY created_at DESC LIMIT 1) m`,
    [caseIds],
  );
  return new Map(rows.map((row) => [row.case_id, row.columns]));
}

/** A case as a route names it: its alert's source, its alert, itself. */
export interface CaseRef {
  sourceKey: string;
  alertId: number;
  caseId: number;
}

/** The case, or 404 naming the alert when the alert is not the source's, then naming the case when it is not the alert's. */
export async function findAlertCase(db: Queryable, { sourceKey, alertId, caseId }: CaseRef): Promise<CaseRow> {
  await findAlert(db, sourceKey, alertId);
  return findCase(db, alertId, caseId);
}

/** A page of the alert's cases, newest first, each with its newest match's columns, and the count of each status. */
export async function listAlertCases(
  db: Queryable,
  publicBaseUrl: string,
  sourceKey: string,
  alertId: number,
  page: { offset: number; limit: number; status?: CaseStatus | undefined },
): Promise<CaseList> {
  await findAlert(db, sourceKey, alertId);
  const { counts, rows } = await listCases(db, alertId, page);
  const columns = await newestColumns(db, rows.map((row) => row.id));
  return { counts, cases: rows.map((row) => ({ ...toCase(row, publicBaseUrl), columns: columns.get(row.id) ?? {} })) };
}

/** A page of the case's matches with their column values, newest first. */
export async function listCaseMatches(db: Queryable, kase: CaseRef, page: { offset: number; limit: number }): Promise<{ items: CaseMatch[] }> {
  await findAlertCase(db, kase);
  const { rows } = await db.query<{ nodes: string[]; edges: string[]; columns: Record<string, unknown>; created_at: Date }>(
    'SELECT nodes, edges, columns, created_at FROM alert_matches WHERE case_id = $1 ORDER BY created_at DESC, hash OFFSET $2 LIMIT $3',
    [kase.caseId, page.offset, page.limit],
  );
  return { items: rows.map((r) => ({ nodes: r.nodes, edges: r.edges, columns: r.columns, createdAt: r.created_at.toISOString() })) };
}

/** The case's action log, oldest first. */
export async function caseActionLog(db: Queryable, kase: CaseRef): Promise<{ items: CaseActionRecord[] }> {
  await findAlertCase(db, kase);
  return { items: await listCaseActions(db, kase.caseId) };
}
