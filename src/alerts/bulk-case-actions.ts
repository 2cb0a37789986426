/**
 * One action on many cases at once, from the inbox (issue 40): each case changed as one case action is, in its own
 * transaction with its own caseStatusChange (case-actions.ts), so a bulk change is exactly the single changes it
 * stands for, and one refused case does not undo the others.
 */
import { Type, type Static } from 'typebox';
import { loadAlertScope, scopeReads } from '../access/alert-scope.js';
import type { Principal } from '../auth/principal.js';
import type { Database } from '../db/database.js';
import { AppError, invalidParameter } from '../errors.js';
import { applyCaseAction, CASE_ACTIONS, MAX_COMMENT_LENGTH } from './case-actions.js';
import { BulkCaseIds, type BulkCaseActionResult } from './inbox-schemas.js';

/** POST /api/cases/action: a case action (as POST …/cases/:caseId/action takes it) and the cases it is for. */
export const BulkCaseActionBody = Type.Object({
  caseIds: BulkCaseIds,
  action: Type.Enum([...CASE_ACTIONS]),
  comment: Type.Optional(Type.String({ maxLength: MAX_COMMENT_LENGTH })),
});
export type BulkCaseAction = Static<typeof BulkCaseActionBody>;

/**
 * The outcome for each case, in the order given: `done`, `redundant` (it already had that status) or `not_found`: no
 * such case, or one whose alert the caller may not read, told alike, so the answer says nothing of cases they cannot see.
 */
export async function actOnCases(db: Database, publicBaseUrl: string, actor: Principal, request: BulkCaseAction): Promise<BulkCaseActionResult[]> {
  // The rule applyCaseAction would refuse on every case, refused once, before any case changes.
  if (request.action === 'comment' && !request.comment?.trim()) throw invalidParameter('comment must not be empty for the action "comment"', 'comment');
  const scope = await loadAlertScope(db, actor);
  const { rows } = await db.query<{ id: number; alert_id: number; source_key: string }>(
    'SELECT c.id, c.alert_id, a.source_key FROM cases c JOIN alerts a ON a.id = c.alert_id WHERE c.id = ANY($1::int[])',
    [request.caseIds],
  );
  const cases = new Map(rows.map((row) => [row.id, row]));
  const results: BulkCaseActionResult[] = [];
  for (const caseId of request.caseIds) {
    const kase = cases.get(caseId);
    if (!kase || !scopeReads(scope, kase.alert_id)) {
      results.push({ caseId, outcome: 'not_found' });
      continue;
    }
    try {
      await applyCaseAction(db, publicBaseUrl, { sourceKey: kase.source_key, alertId: kase.alert_id, caseId }, actor, { action: request.action, comment: request.comment });
      results.push({ caseId, outcome: 'done' });
    } catch (err) {
      // Deleted since it was read (the case, or its alert), or already in that status: that case's outcome, not the call's.
      if (err instanceof AppError && err.key === 'redundant_action') results.push({ caseId, outcome: 'redundant' });
      else if (err instanceof AppError && err.key === 'not_found') results.push({ caseId, outcome: 'not_found' });
      else throw err;
    }
  }
  return results;
}
