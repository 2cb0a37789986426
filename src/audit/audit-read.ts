/**
 * Reading the audit log (GET /api/admin/audit): entries filtered by target, user, data source, action and time,
 * newest first, a page at a time by a cursor.
 */
import type { Queryable } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import { instantOf } from '../http/time-range.js';
import { DEFAULT_AUDIT_PAGE_SIZE, type AuditFilters, type AuditPage, type AuditRecord, type AuditTarget } from './schemas.js';

interface AuditRow {
  id: number;
  at: Date;
  user_id: number | null;
  username: string | null;
  application_id: number | null;
  application_name: string | null;
  action: string;
  target_type: AuditTarget;
  target_id: string;
  source_key: string | null;
  before: unknown;
  after: unknown;
}

/**
 * The statement of one page: only the filters given, each a plain condition, so the planner sees which hold (the
 * (target_type, target_id, id) index for one target, the (at, id) index for a time range, else the primary key
 * backwards). Newest first by id, the order entries were written in; the cursor is the last id seen, so entries
 * written meanwhile never move the pages after the first.
 */
export function auditStatement(filters: AuditFilters): { text: string; values: unknown[] } {
  const from = instantOf(filters.from, 'from', 'query parameter');
  const to = instantOf(filters.to, 'to', 'query parameter');
  if (from && to && from >= to) throw invalidParameter('query parameter from must be before query parameter to', 'from');
  if (filters.targetId !== undefined && filters.targetType === undefined) {
    // An id alone names nothing: alert 3 and case 3 are different things.
    throw invalidParameter('query parameter targetId needs targetType (alert, case, group, accessRights or accessRightsSettings)', 'targetId');
  }
  const values: unknown[] = [];
  const conditions: string[] = [];
  const where = (column: string, operator: string, value: unknown) => {
    values.push(value);
    conditions.push(`${column} ${operator} $${values.length}`);
  };
  if (filters.targetType !== undefined) where('target_type', '=', filters.targetType);
  if (filters.targetId !== undefined) where('target_id', '=', filters.targetId);
  if (filters.userId !== undefined) where('user_id', '=', filters.userId);
  if (filters.sourceKey !== undefined) where('source_key', '=', filters.sourceKey);
  if (filters.action !== undefined) where('action', '=', filters.action);
  if (from) where('at', '>=', from);
  if (to) where('at', '<', to);
  if (filters.cursor !== undefined) where('id', '<', Number(filters.cursor));
  // One more than the page: whether there is a next page, without counting.
  values.push((filters.limit ?? DEFAULT_AUDIT_PAGE_SIZE) + 1);
  const text = `SELECT * FROM audit_log ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${values.length}`;
  return { text, values };
}

/** One page, newest first; `nextCursor` null on the last. No total: counting every match is what paging avoids. */
export async function readAudit(db: Queryable, filters: AuditFilters): Promise<AuditPage> {
  const limit = filters.limit ?? DEFAULT_AUDIT_PAGE_SIZE;
  const { text, values } = auditStatement(filters);
  const { rows } = await db.query<AuditRow>(text, values);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { items: page.map(toAuditRecord), nextCursor: rows.length > limit && last ? String(last.id) : null };
}

function toAuditRecord(row: AuditRow): AuditRecord {
  const record: AuditRecord = {
    id: row.id,
    at: row.at.toISOString(),
    user: row.user_id === null ? null : { id: row.user_id, username: row.username ?? '' },
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
  };
  if (row.application_id !== null) record.application = { id: row.application_id, name: row.application_name ?? '' };
  if (row.source_key !== null) record.sourceKey = row.source_key;
  if (row.before !== null) record.before = row.before;
  if (row.after !== null) record.after = row.after;
  return record;
}
