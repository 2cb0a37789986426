/**
 * Who works on a case (issue 40): assigning cases to a user who may read their alert, as LKE's client does it
 * (`assignCases`, `bulkAssignCases`), and the users a case of an alert may be assigned to (`getAlertUsers`).
 * An assignment is a line of the case's action log and an entry of the audit log; it emits no webhook event (the
 * contract has three, none of them about assignment).
 */
import { alertReaders } from '../access/alert-scope.js';
import type { SourceAccess } from '../access/source-access.js';
import { recordAudit } from '../audit/audit-log.js';
import type { Principal } from '../auth/principal.js';
import type { Database } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { findAlert } from './alerts.js';
import { MAX_ASSIGNED_CASES, type AlertUser } from './inbox-schemas.js';

export interface Assignment {
  /** The cases of each alert, all of the caller's source. */
  casesPerAlert: readonly { alertId: number; caseIds: readonly number[] }[];
  /** Who takes them; null unassigns them. */
  userId: number | null;
  /** The body field that named the user (`userId`, or `assignedUserId` in the bulk call): what a refusal names. */
  userField: string;
}

/**
 * Assigns the cases, all or none, in one transaction: an alert the caller may not read, or a case that is not one of
 * its alert's, answers 404 as one that does not exist; a user who may not read an alert, 400 naming the user's field.
 * A case already assigned to that user is left as it is (no log line).
 */
export async function assignCases(db: Database, actor: Principal, access: SourceAccess, assignment: Assignment): Promise<void> {
  const byAlert = new Map<number, Set<number>>();
  for (const { alertId, caseIds } of assignment.casesPerAlert) {
    const cases = byAlert.get(alertId) ?? new Set<number>();
    for (const caseId of caseIds) cases.add(caseId);
    byAlert.set(alertId, cases);
  }
  const total = [...byAlert.values()].reduce((sum, cases) => sum + cases.size, 0);
  if (total > MAX_ASSIGNED_CASES) throw invalidParameter(`casesPerAlert must hold at most ${MAX_ASSIGNED_CASES} case ids in all, got ${total}`, 'casesPerAlert');
  const alertIds = [...byAlert.keys()];
  for (const alertId of alertIds) if (!access.readsAlert(alertId)) throw notFound('alert', alertId);

  await db.transaction(async (tx) => {
    // FOR SHARE: an alert deleted meanwhile takes its cases; one being assigned here waits for this to end.
    const { rows: alerts } = await tx.query<{ id: number }>('SELECT id FROM alerts WHERE source_key = $1 AND id = ANY($2::int[]) FOR SHARE', [access.sourceKey, alertIds]);
    const found = new Set(alerts.map((row) => row.id));
    const missing = alertIds.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound('alert', missing);

    if (assignment.userId !== null) {
      for (const alertId of alertIds) {
        const readers = await alertReaders(tx, { sourceKey: access.sourceKey, alertId }, assignment.userId);
        if (readers.length === 0) {
          throw invalidParameter(
            `${assignment.userField} ${assignment.userId} is not a user who may read alert ${alertId}: pick one of GET /api/${access.sourceKey}/alerts/${alertId}/users`,
            assignment.userField,
          );
        }
      }
    }

    // In id order, as every writer of several cases takes them: two assignments of the same cases cannot deadlock.
    const caseIds = [...byAlert.values()].flatMap((cases) => [...cases]).sort((a, b) => a - b);
    const { rows: locked } = await tx.query<{ id: number; alert_id: number; assigned_user_id: number | null }>(
      'SELECT id, alert_id, assigned_user_id FROM cases WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE',
      [caseIds],
    );
    const current = new Map(locked.map((row) => [row.id, row]));
    for (const [alertId, cases] of byAlert) {
      for (const caseId of cases) if (current.get(caseId)?.alert_id !== alertId) throw notFound('case', caseId);
    }
    const changed = locked.filter((row) => row.assigned_user_id !== assignment.userId);
    if (changed.length === 0) return;
    const changedIds = changed.map((row) => row.id);
    await tx.query('UPDATE cases SET assigned_user_id = $2 WHERE id = ANY($1::int[])', [changedIds, assignment.userId]);
    await tx.query(
      `INSERT INTO case_actions (case_id, user_id, action, assigned_user_id, application_id, application_name)
       SELECT unnest($1::int[]), $2, 'assign', $3, $4, $5`,
      [changedIds, actor.userId, assignment.userId, actor.application?.id ?? null, actor.application?.name ?? null],
    );
    for (const row of changed) {
      await recordAudit(tx, actor, {
        action: 'case.assign',
        targetType: 'case',
        targetId: row.id,
        sourceKey: access.sourceKey,
        before: { alertId: row.alert_id, assignedUserId: row.assigned_user_id },
        after: { alertId: row.alert_id, assignedUserId: assignment.userId },
      });
    }
  });
}

/** The users who may read the alert (the ones its cases may be assigned to), by username; 404 for an alert not of the source. */
export async function alertUsers(db: Database, sourceKey: string, alertId: number): Promise<AlertUser[]> {
  await findAlert(db, sourceKey, alertId);
  const readers = await alertReaders(db, { sourceKey, alertId });
  return readers.map((user) => ({ id: user.id, username: user.username, email: user.email, hasAssignedCases: user.has_assigned_cases }));
}
