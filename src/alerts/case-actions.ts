import { recordAudit } from '../audit/audit-log.js';
import type { ApplicationRef, Principal } from '../auth/principal.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, invalidParameter } from '../errors.js';
import { enqueueEvents } from '../outbox/enqueue.js';
import { renderCaseStatusChange } from '../outbox/events.js';
import { findAlert } from './alerts.js';
import { caseUrl } from './case-url.js';
import { STATUS_OF_ACTION, MAX_COMMENT_LENGTH, type CaseAction, type CaseStatus } from './schemas.js';

export { CASE_ACTIONS, MAX_COMMENT_LENGTH, STATUS_OF_ACTION, type CaseAction } from './schemas.js';


export interface CaseActionRecord {
  id: number;
  caseId: number;
  user: { id: number; username: string; email: string } | null;
  action: string;
  comment?: string;
  /** On an `assign` line: who the case was assigned to; null when it was unassigned (case-assignment.ts). */
  assignedUser?: { id: number; username: string; email: string } | null;
  /** Present when an API key made the action: the key's application, acting for `user`. */
  application?: ApplicationRef;
  createdAt: string;
  updatedAt: string;
}

interface LockedCase {
  id: number;
  status: CaseStatus;
  created_at: Date;
}

/**
 * Applies a user's action to a case in one transaction: the status, the action log and, for a status
 * change, the caseStatusChange deliveries. Setting the status the case already has is `redundant_action`.
 */
export async function applyCaseAction(
  db: Database,
  publicBaseUrl: string,
  target: { sourceKey: string; alertId: number; caseId: number },
  actor: Principal,
  input: { action: CaseAction; comment?: string | undefined },
): Promise<void> {
  if (input.comment !== undefined && input.comment.length > MAX_COMMENT_LENGTH) {
    throw invalidParameter(`comment must be at most ${MAX_COMMENT_LENGTH} characters`, 'comment');
  }
  if (input.action === 'comment' && !input.comment?.trim()) throw invalidParameter('comment must not be empty for the action "comment"', 'comment');
  await db.transaction(async (tx) => {
    const alert = await findAlert(tx, target.sourceKey, target.alertId, true);
    // FOR UPDATE: two concurrent changes of one case are applied one after the other, each judged on the other's result.
    const { rows } = await tx.query<LockedCase>('SELECT id, status, created_at FROM cases WHERE id = $1 AND alert_id = $2 FOR UPDATE', [
      target.caseId,
      target.alertId,
    ]);
    const kase = rows[0];
    if (!kase) throw new AppError('not_found', `case ${target.caseId} was not found`);

    // Who changed the case, in the change's transaction (audit/audit-log.ts); the comment is what they said of it.
    const audited = { targetType: 'case', targetId: kase.id, sourceKey: target.sourceKey } as const;
    if (input.action === 'comment') {
      await insertAction(tx, kase.id, actor, 'comment', input.comment);
      await recordAudit(tx, actor, { action: 'case.comment', ...audited, after: { alertId: alert.id, comment: input.comment } });
      return;
    }
    const status = STATUS_OF_ACTION[input.action];
    if (kase.status === status) throw new AppError('redundant_action', `case ${kase.id} is already ${status}`);
    const { rows: updated } = await tx.query<{ updated_at: Date }>(
      `UPDATE cases SET status = $2, status_updated_at = now(), status_user_id = $3, updated_at = now() WHERE id = $1 RETURNING updated_at`,
      [kase.id, status, actor.userId],
    );
    await insertAction(tx, kase.id, actor, input.action, input.comment);
    await recordAudit(tx, actor, {
      action: 'case.status',
      ...audited,
      before: { alertId: alert.id, status: kase.status },
      after: { alertId: alert.id, status, ...(input.comment === undefined ? {} : { comment: input.comment }) },
    });
    const payload = renderCaseStatusChange(
      target.sourceKey,
      alert,
      { id: kase.id, createdAt: kase.created_at, updatedAt: updated[0]!.updated_at, status, url: caseUrl(publicBaseUrl, alert.id, kase.id) },
      { id: actor.userId, username: actor.username, email: actor.email },
      input.comment,
    );
    await enqueueEvents(tx, [{ eventType: 'caseStatusChange', sourceKey: target.sourceKey, alertId: alert.id, caseId: kase.id, payload }]);
  });
}

/** One line of the action log: who acted, and through which application when an API key acted for them. */
async function insertAction(tx: Queryable, caseId: number, actor: Principal, action: string, comment: string | undefined): Promise<void> {
  await tx.query(
    'INSERT INTO case_actions (case_id, user_id, action, comment, application_id, application_name) VALUES ($1, $2, $3, $4, $5, $6)',
    [caseId, actor.userId, action, comment ?? null, actor.application?.id ?? null, actor.application?.name ?? null],
  );
}

export async function listCaseActions(db: Queryable, caseId: number): Promise<CaseActionRecord[]> {
  const { rows } = await db.query<{
    id: number;
    case_id: number;
    user_id: number | null;
    username: string | null;
    email: string | null;
    action: string;
    comment: string | null;
    application_id: number | null;
    application_name: string | null;
    assigned_user_id: number | null;
    assigned_username: string | null;
    assigned_email: string | null;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT a.id, a.case_id, a.user_id, u.username, u.email, a.action, a.comment, a.application_id, a.application_name,
            a.assigned_user_id, au.username AS assigned_username, au.email AS assigned_email, a.created_at, a.updated_at
     FROM case_actions a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN users au ON au.id = a.assigned_user_id WHERE a.case_id = $1 ORDER BY a.id`,
    [caseId],
  );
  return rows.map((row) => {
    const record: CaseActionRecord = {
      id: row.id,
      caseId: row.case_id,
      user: row.user_id !== null && row.username !== null ? { id: row.user_id, username: row.username, email: row.email ?? '' } : null,
      action: row.action,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
    if (row.comment !== null) record.comment = row.comment;
    if (row.action === 'assign') {
      record.assignedUser = row.assigned_user_id !== null && row.assigned_username !== null ? { id: row.assigned_user_id, username: row.assigned_username, email: row.assigned_email ?? '' } : null;
    }
    if (row.application_id !== null) record.application = { id: row.application_id, name: row.application_name ?? '' };
    return record;
  });
}
