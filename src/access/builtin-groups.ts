import { ADMIN_GROUP_ID, ANALYST_GROUP_ID } from '../auth/groups.js';
import { ACTIONS, ADMIN_ACTIONS, ANALYST_ACTIONS, ANY_TARGET, type AccessRight } from './access-rights.js';

/**
 * The built-in groups' access rights, written as LKE's client reads a group's: what source-access.ts's
 * `builtinAccess` grants, told in AccessRight shapes, on every data source. They are not stored (the built-in groups'
 * rights cannot be set): this is the one place that spells them out.
 *  - Admin: write every node category and edge type, edit every property, read every alert, every action
 *    (LKE's `AdminAction`s too, which are the Admin group's alone).
 *  - Analyst: read every node category, edge type, property and alert, and the read-query actions
 *    (`ANALYST_ACTIONS`: what every signed-in user could do before groups existed).
 * Each action is listed by name: AccessRight has no `*` for actions.
 */

type AnyAction = AccessRight & { targetType: 'action' };

const everything = (item: 'read' | 'write', property: 'read' | 'edit'): AccessRight[] => [
  { targetType: 'nodeCategory', targetName: ANY_TARGET, type: item },
  { targetType: 'edgeType', targetName: ANY_TARGET, type: item },
  { targetType: 'nodePropertyKey', targetItemType: ANY_TARGET, targetName: ANY_TARGET, type: property },
  { targetType: 'edgePropertyKey', targetItemType: ANY_TARGET, targetName: ANY_TARGET, type: property },
  { targetType: 'alert', targetName: ANY_TARGET, type: 'read' },
];

const doing = (actions: readonly AnyAction['targetName'][]): AccessRight[] => actions.map((targetName) => ({ targetType: 'action', targetName, type: 'do' }));

const BUILTIN_RIGHTS: Readonly<Record<number, readonly AccessRight[]>> = Object.freeze({
  [ADMIN_GROUP_ID]: Object.freeze([...everything('write', 'edit'), ...doing([...ACTIONS, ...ADMIN_ACTIONS])]),
  [ANALYST_GROUP_ID]: Object.freeze([...everything('read', 'read'), ...doing(ANALYST_ACTIONS)]),
});

/** A built-in group's rights (none for an id that is not one). */
export function builtinAccessRights(groupId: number): readonly AccessRight[] {
  return BUILTIN_RIGHTS[groupId] ?? [];
}

/** Whether a built-in group has an action (LKE's getGroupNames with `action`). */
export function builtinHasAction(groupId: number, action: string): boolean {
  return builtinAccessRights(groupId).some((right) => right.targetType === 'action' && right.targetName === action && right.type === 'do');
}
