/**
 * An alert as the audit log keeps it before and after a change (audit/audit-log.ts): what an Admin sets, its queries
 * included, and none of what its runs change (last run, next run, problems), which are the service's own work and
 * would show as changes no one made.
 */
import type { Queryable } from '../db/database.js';
import type { AlertColumn, AlertQuery } from './schemas.js';

export interface AuditedAlert {
  id: number;
  sourceKey: string;
  title: string;
  description: string;
  enabled: boolean;
  cron: string | null;
  columns: AlertColumn[];
  queries: AlertQuery[];
  target: string | null;
  /** As set on the alert: null is the global limit (the API's answer shows the limit in effect instead). */
  maxMatches: number | null;
  timeoutMs: number | null;
}

/**
 * The alert `id` as it is in `db` (a transaction, to see its own changes), or undefined when it does not exist.
 * `lock` takes its row FOR UPDATE: the snapshot taken before a change is then the state that change replaces.
 */
export async function auditedAlert(db: Queryable, id: number, lock = false): Promise<AuditedAlert | undefined> {
  const { rows } = await db.query<{
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
  }>(`SELECT id, source_key, title, description, enabled, cron, columns, target, max_matches, timeout_ms FROM alerts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  const row = rows[0];
  if (!row) return undefined;
  const queries = await db.query<AlertQuery>('SELECT id, name, query, dialect, description FROM alert_queries WHERE alert_id = $1 ORDER BY id', [id]);
  return {
    id: row.id,
    sourceKey: row.source_key,
    title: row.title,
    description: row.description,
    enabled: row.enabled,
    cron: row.cron,
    columns: row.columns,
    queries: queries.rows,
    target: row.target,
    maxMatches: row.max_matches,
    timeoutMs: row.timeout_ms,
  };
}
