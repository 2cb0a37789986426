import type { BulkAction, CaseAction, CaseStatus } from '../types';

// A case's actions in words, for the forms that take them and the log that lists them.

/** The status each status action sets (`comment` sets none). */
export const STATUS_SET_BY: Record<Exclude<BulkAction, 'comment'>, CaseStatus> = {
  confirm: 'confirmed',
  dismiss: 'dismissed',
  'in-progress': 'in-progress',
  unconfirm: 'unconfirmed',
};

export const STATUS_ACTIONS: { value: Exclude<BulkAction, 'comment'>; label: string }[] = [
  { value: 'confirm', label: 'Confirm' },
  { value: 'dismiss', label: 'Dismiss' },
  { value: 'in-progress', label: 'In progress' },
  { value: 'unconfirm', label: 'Unconfirm' },
];

const LOGGED: Record<string, string> = { confirm: 'confirmed', dismiss: 'dismissed', 'in-progress': 'set in progress', unconfirm: 'unconfirmed', comment: 'commented' };

/** One entry of the action log as a sentence's verb: "confirmed", "assigned to bob", "unassigned". */
export function describeAction(entry: Pick<CaseAction, 'action' | 'assignedUser'>): string {
  if (entry.action === 'assign') return entry.assignedUser ? `assigned to ${entry.assignedUser.username}` : 'unassigned';
  return LOGGED[entry.action] ?? entry.action;
}

/** What a bulk action came to for one case, as the inbox reports it. */
export const OUTCOME_WORDS = {
  done: 'done',
  redundant: 'unchanged (it already had that status)',
  not_found: 'not found (deleted, or not yours to see)',
} as const;
