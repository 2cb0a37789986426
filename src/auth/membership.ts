import type { Queryable } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import type { Principal } from './principal.js';
import type { Group } from './schemas.js';

/**
 * Which groups a user or an API key is in: the groups are rows (the built-in Admin and Analyst, and the custom groups
 * of each data source), looked up in the database, never a list in the code.
 */

/**
 * SQL: the groups of one member as the API lists them, a JSON array ordered by id. `$table` is the membership table
 * (`user_groups`, `application_groups`), `$column` its member column and `$member` the member's id expression.
 */
export function memberGroupsJson(table: 'user_groups' | 'application_groups', column: 'user_id' | 'application_id', member: string): string {
  return `COALESCE((SELECT jsonb_agg(jsonb_build_object('id', g.id, 'name', g.name, 'builtin', g.builtin, 'sourceKey', g.source_key) ORDER BY g.id)
                    FROM ${table} m JOIN groups g ON g.id = m.group_id WHERE m.${column} = ${member}), '[]')`;
}

/** A group as the membership queries give it (memberGroupsJson, findGroups): `sourceKey` null for a built-in one. */
export interface GroupRow {
  id: number;
  name: string;
  builtin: boolean;
  sourceKey: string | null;
}

/** A member's group in answers: a built-in one keeps the contract's `{id, name, builtin}`, a custom one adds its source. */
export function toGroup(row: GroupRow): Group {
  return row.sourceKey === null ? { id: row.id, name: row.name, builtin: row.builtin } : { id: row.id, name: row.name, builtin: row.builtin, sourceKey: row.sourceKey };
}

/**
 * The groups with these ids that exist, by id. In a transaction that is about to give them to someone, `FOR SHARE`
 * keeps them from being deleted before it commits (a group deleted meanwhile would fail the insert's foreign key).
 */
export async function findGroups(db: Queryable, ids: readonly number[], options: { lock?: boolean } = {}): Promise<GroupRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<GroupRow>(
    `SELECT id, name, builtin, source_key AS "sourceKey" FROM groups WHERE id = ANY($1::int[]) ORDER BY id${options.lock ? ' FOR SHARE' : ''}`,
    [[...new Set(ids)]],
  );
  return rows;
}

/** The groups `ids` name, each once, locked for the transaction; an id that is no group → 400 naming `field`. */
export async function checkGroupIds(tx: Queryable, ids: readonly number[], field: string): Promise<GroupRow[]> {
  const found = await findGroups(tx, ids, { lock: true });
  const known = new Set(found.map((group) => group.id));
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw invalidParameter(`${field} contains ${unknown}, which is not a group (1 = Admin, 2 = Analyst)`, field);
  return found;
}

/** What a PATCH may say about a member's groups: the whole set (`groups`), or LKE's additions and removals. */
export interface GroupChanges {
  groups?: number[] | undefined;
  addedGroups?: number[] | undefined;
  removedGroups?: number[] | undefined;
}

/** Refuses, before anything is read, a change that says two things at once. */
export function checkGroupChanges(changes: GroupChanges): void {
  if (changes.groups !== undefined && (changes.addedGroups !== undefined || changes.removedGroups !== undefined)) {
    throw invalidParameter('give groups (the whole set), or addedGroups and removedGroups (changes to it), not both', 'groups');
  }
  const removed = new Set(changes.removedGroups ?? []);
  const both = (changes.addedGroups ?? []).find((id) => removed.has(id));
  if (both !== undefined) throw invalidParameter(`addedGroups and removedGroups both contain ${both}: a group is added or removed, not both`, 'addedGroups');
}

/**
 * The member's groups once `changes` apply to `current` (their ids), checked and locked; undefined when the change says
 * nothing of groups. Removing a group the member is not in, or adding one it is in, changes nothing; the member must
 * keep at least one group (a member of none could sign in and see nothing: deleting a group is how that is done).
 */
export async function resolveGroupChanges(tx: Queryable, current: readonly number[], changes: GroupChanges): Promise<GroupRow[] | undefined> {
  if (changes.groups !== undefined) return checkGroupIds(tx, changes.groups, 'groups');
  if (changes.addedGroups === undefined && changes.removedGroups === undefined) return undefined;
  await checkGroupIds(tx, changes.addedGroups ?? [], 'addedGroups');
  await checkGroupIds(tx, changes.removedGroups ?? [], 'removedGroups');
  const removed = new Set(changes.removedGroups ?? []);
  const ids = [...new Set([...current, ...(changes.addedGroups ?? [])])].filter((id) => !removed.has(id));
  if (ids.length === 0) throw invalidParameter('removedGroups would leave no group: a user or an API key keeps at least one', 'removedGroups');
  return findGroups(tx, ids, { lock: true });
}

/** Who joined or left which groups in one change (the added and removed groups only). */
export interface MembershipChange {
  member: { kind: 'user' | 'application'; id: number; name: string };
  added: readonly GroupRow[];
  removed: readonly GroupRow[];
}

export function membershipChange(member: MembershipChange['member'], before: readonly GroupRow[], after: readonly GroupRow[]): MembershipChange {
  const beforeIds = new Set(before.map((group) => group.id));
  const afterIds = new Set(after.map((group) => group.id));
  return { member, added: after.filter((group) => !beforeIds.has(group.id)), removed: before.filter((group) => !afterIds.has(group.id)) };
}

/**
 * Records a membership change in the audit log, in the change's transaction. app.ts gives the audit's writer
 * (access/groups.service.ts): auth cannot import the audit log, which imports auth's Principal.
 */
export type MembershipLog = (tx: Queryable, actor: Principal | null, change: MembershipChange) => Promise<void>;

/** Who changes a membership, and where it is recorded: absent for the service's own changes (the bootstrap, the CLI). */
export interface MembershipContext {
  actor?: Principal | null | undefined;
  membershipLog?: MembershipLog | undefined;
}

/** Writes the change to the context's log when there is one and the change is not empty. */
export async function logMembership(tx: Queryable, context: MembershipContext, change: MembershipChange): Promise<void> {
  if (!context.membershipLog || (change.added.length === 0 && change.removed.length === 0)) return;
  await context.membershipLog(tx, context.actor ?? null, change);
}
