import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import type { AuditTarget } from './schemas.js';

// Declared with the API's shapes (schemas.ts), which filter and answer it.
export type { AuditTarget } from './schemas.js';

export interface AuditEntry {
  /** What was done, `<target>.<verb>`: `alert.create`, `case.status`, `case.assign`, `group.delete`, `accessRights.set`… */
  action: string;
  targetType: AuditTarget;
  targetId: string | number;
  sourceKey?: string | undefined;
  /** The target as it was before and after the change (absent for a creation or a deletion): never a secret. */
  before?: unknown;
  after?: unknown;
}

/**
 * Records one change, in the caller's transaction: the entry exists exactly when the change committed. `actor` is
 * null for the service's own changes (none today; a connector's service user later).
 */
export async function recordAudit(tx: Queryable, actor: Principal | null, entry: AuditEntry): Promise<void> {
  await tx.query(
    `INSERT INTO audit_log (user_id, username, application_id, application_name, action, target_type, target_id, source_key, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      actor?.userId ?? null,
      actor?.username ?? null,
      actor?.application?.id ?? null,
      actor?.application?.name ?? null,
      entry.action,
      entry.targetType,
      String(entry.targetId),
      entry.sourceKey ?? null,
      entry.before === undefined ? null : JSON.stringify(entry.before),
      entry.after === undefined ? null : JSON.stringify(entry.after),
    ],
  );
}
