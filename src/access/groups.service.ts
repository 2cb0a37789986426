import { recordAudit } from '../audit/audit-log.js';
import type { MembershipLog } from '../auth/membership.js';
import type { Principal } from '../auth/principal.js';
import { INVISIBLE } from '../auth/users.service.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, alreadyExists, invalidParameter, notFound, uniqueViolationAs } from '../errors.js';
import { DEFAULT_PAGE_SIZE, MAX_INT4 } from '../http/schemas.js';
import { unknownSource } from './access-hook.js';
import { ADMIN_ACTIONS, type AccessRight } from './access-rights.js';
import { builtinAccessRights, builtinHasAction } from './builtin-groups.js';
import * as repo from './groups.repo.js';
import { EVERY_SOURCE, MAX_GROUPS_PER_SOURCE, type DataSourceGroup, type GroupName, type GroupUsers, type GroupUsersQuery } from './schemas.js';

/**
 * Groups of a data source and their access rights, as LKE's client manages them (docs/api.md, Groups and access
 * rights). Every change of a group, of its rights, of a source's access-right setting, and of who is in a group, is
 * recorded in the audit log in the change's own transaction.
 */

const BUILTIN_NAMES = ['Admin', 'Analyst'];

function toAccessRight(stored: repo.StoredRight): AccessRight {
  const { targetType, targetItemType, targetName, type } = stored;
  // The stored row is one the schema let in (PUT …/access_rights): only its shape is restored here.
  return (targetType === 'nodePropertyKey' || targetType === 'edgePropertyKey' ? { targetType, targetItemType, targetName, type } : { targetType, targetName, type }) as AccessRight;
}

function toGroup(record: repo.GroupRecord): DataSourceGroup {
  return {
    id: record.id,
    uuid: record.uuid,
    name: record.name,
    sourceKey: record.source_key ?? EVERY_SOURCE,
    builtin: record.builtin,
    userCount: record.user_count,
    accessRights: record.builtin ? [...builtinAccessRights(record.id)] : record.access_rights.map(toAccessRight),
    createdAt: record.created_at.toISOString(),
    updatedAt: record.updated_at.toISOString(),
  };
}

/** What the audit log keeps of a group: who it is, not its rights (accessRights entries have those). */
const summary = (group: Pick<DataSourceGroup, 'id' | 'uuid' | 'name' | 'sourceKey'>) => ({ id: group.id, uuid: group.uuid, name: group.name, sourceKey: group.sourceKey });

async function requireSource(db: Queryable, sourceKey: string, lock?: 'share' | 'update'): Promise<{ propertyKeyAccessRights: boolean }> {
  const source = await repo.findSourceSetting(db, sourceKey, lock);
  if (!source) throw unknownSource(sourceKey);
  return source;
}

/** A group of the source, locked for the change; a built-in one is refused, as LKE refuses it (403). */
async function lockCustomGroup(tx: Queryable, sourceKey: string, id: number, change: string): Promise<{ id: number; name: string }> {
  const group = await repo.lockSourceGroup(tx, sourceKey, id);
  if (!group) throw notFound('group', id);
  if (group.builtin) throw new AppError('forbidden', `the built-in group ${group.name} cannot be ${change}: it is every data source's, with fixed rights`);
  return group;
}

/** A group name as stored: trimmed, visible, not a built-in group's. */
function checkGroupName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidParameter('name must not be empty or only spaces', 'name');
  if (INVISIBLE.test(trimmed)) throw invalidParameter('name must not contain invisible, control or text-direction characters (such as U+200B or U+202E)', 'name');
  const builtin = BUILTIN_NAMES.find((builtinName) => builtinName.toLowerCase() === trimmed.toLowerCase());
  if (builtin) throw alreadyExists(`name "${trimmed}" is the built-in group ${builtin}'s: choose another`);
  return trimmed;
}

const nameTaken = (err: unknown, sourceKey: string, name: string, uuid?: string) =>
  uniqueViolationAs(err, { groups_source_name: `data source "${sourceKey}" already has a group named "${name}"`, groups_uuid: `a group already has the uuid ${uuid}` });

export async function listGroups(db: Database, sourceKey: string): Promise<DataSourceGroup[]> {
  await requireSource(db, sourceKey);
  return (await repo.listSourceGroups(db, sourceKey)).map(toGroup);
}

export async function getGroup(db: Database, sourceKey: string, id: number): Promise<DataSourceGroup> {
  await requireSource(db, sourceKey);
  const record = await repo.findSourceGroup(db, sourceKey, id);
  if (!record) throw notFound('group', id);
  return toGroup(record);
}

export async function createGroup(db: Database, actor: Principal | null, sourceKey: string, input: { name: string; uuid?: string | undefined }): Promise<DataSourceGroup> {
  const name = checkGroupName(input.name);
  try {
    return await db.transaction(async (tx) => {
      // Held to the end: two creations on one source count one after the other.
      await requireSource(tx, sourceKey, 'update');
      if ((await repo.countCustomGroups(tx, sourceKey)) >= MAX_GROUPS_PER_SOURCE) {
        throw invalidParameter(`data source "${sourceKey}" already has ${MAX_GROUPS_PER_SOURCE} groups, the most it may have: delete one first`);
      }
      const id = await repo.insertGroup(tx, { sourceKey, name, uuid: input.uuid });
      const group = toGroup((await repo.findSourceGroup(tx, sourceKey, id))!);
      await recordAudit(tx, actor, { action: 'group.create', targetType: 'group', targetId: id, sourceKey, after: summary(group) });
      return group;
    });
  } catch (err) {
    throw nameTaken(err, sourceKey, name, input.uuid);
  }
}

export async function renameGroup(db: Database, actor: Principal | null, sourceKey: string, id: number, newName: string): Promise<DataSourceGroup> {
  const name = checkGroupName(newName);
  try {
    await db.transaction(async (tx) => {
      await requireSource(tx, sourceKey);
      const group = await lockCustomGroup(tx, sourceKey, id, 'renamed');
      if (group.name === name) return;
      await repo.renameGroup(tx, id, name);
      await recordAudit(tx, actor, { action: 'group.rename', targetType: 'group', targetId: id, sourceKey, before: { name: group.name }, after: { name } });
    });
  } catch (err) {
    throw nameTaken(err, sourceKey, name);
  }
  return getGroup(db, sourceKey, id);
}

/**
 * Deletes a custom group, its rights and its memberships. A user or an API key whose only group it was is left in
 * none: it signs in and sees nothing until given another. The audit entry keeps the group, its rights and who was in it.
 */
export async function deleteGroup(db: Database, actor: Principal | null, sourceKey: string, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    await requireSource(tx, sourceKey);
    await lockCustomGroup(tx, sourceKey, id, 'deleted');
    const group = toGroup((await repo.findSourceGroup(tx, sourceKey, id))!);
    const members = await repo.groupMembers(tx, id);
    await repo.deleteGroup(tx, id);
    await recordAudit(tx, actor, { action: 'group.delete', targetType: 'group', targetId: id, sourceKey, before: { ...summary(group), accessRights: group.accessRights, ...members } });
  });
}

const targetOf = (right: AccessRight) => `${right.targetType}\u0000${'targetItemType' in right ? right.targetItemType : ''}\u0000${right.targetName}`;
const describeTarget = (right: AccessRight) => `${right.targetType} ${'targetItemType' in right ? `"${right.targetItemType}".` : ''}"${right.targetName}"`;

/** The rules of a set of rights that need nothing but the set: one right per target, no AdminAction. */
function checkRightsSet(rights: readonly AccessRight[]): void {
  const seen = new Map<string, number>();
  rights.forEach((right, i) => {
    if (right.targetType === 'action' && (ADMIN_ACTIONS as readonly string[]).includes(right.targetName)) {
      throw invalidParameter(`accessRights[${i}].targetName "${right.targetName}" is an action of the built-in Admin group alone (LKE's AdminAction): a custom group cannot be given it`, `accessRights[${i}].targetName`);
    }
    const target = targetOf(right);
    const earlier = seen.get(target);
    if (earlier !== undefined) {
      throw invalidParameter(`accessRights[${i}] is a second right on ${describeTarget(right)} (accessRights[${earlier}] is the first): give each target one right`, `accessRights[${i}]`);
    }
    seen.set(target, i);
  });
}

/** Property-key rights need the source's setting on; alert rights name alerts of the source. */
async function checkRightsOnSource(tx: Queryable, sourceKey: string, propertyKeyAccessRights: boolean, rights: readonly AccessRight[]): Promise<void> {
  const propertyRight = rights.findIndex((right) => right.targetType === 'nodePropertyKey' || right.targetType === 'edgePropertyKey');
  if (propertyRight >= 0 && !propertyKeyAccessRights) {
    throw new AppError(
      'property_key_access_rights_required',
      `accessRights[${propertyRight}] is a property-key right, and data source "${sourceKey}" does not use them: turn them on first (PATCH /api/admin/${sourceKey}/accessRights/settings {"propertyKeyAccessRights": true})`,
      undefined,
      `accessRights[${propertyRight}]`,
    );
  }
  const alertIds = rights.flatMap((right) => (right.targetType === 'alert' && right.targetName !== '*' ? [Number(right.targetName)] : []));
  const known = await repo.alertsOfSource(tx, sourceKey, alertIds.filter((id) => id <= MAX_INT4));
  const unknown = rights.findIndex((right) => right.targetType === 'alert' && right.targetName !== '*' && !known.has(Number(right.targetName)));
  if (unknown >= 0) {
    throw invalidParameter(`accessRights[${unknown}].targetName: ${rights[unknown]!.targetName} is not an alert of data source "${sourceKey}"`, `accessRights[${unknown}].targetName`);
  }
}

/** A set of rights in one order, to tell whether a PUT changed anything. */
const canonical = (rights: readonly AccessRight[]) => JSON.stringify([...rights].sort((a, b) => (targetOf(a) < targetOf(b) ? -1 : targetOf(a) > targetOf(b) ? 1 : 0)));

/** Replaces a custom group's rights with `rights`, the whole set (LKE's setAccessRights). */
export async function setAccessRights(db: Database, actor: Principal | null, sourceKey: string, id: number, rights: readonly AccessRight[]): Promise<void> {
  await db.transaction(async (tx) => {
    // The setting is held (FOR SHARE) until the rights are in: a concurrent PATCH of it waits for them.
    const source = await requireSource(tx, sourceKey, 'share');
    await lockCustomGroup(tx, sourceKey, id, 'given access rights');
    checkRightsSet(rights);
    await checkRightsOnSource(tx, sourceKey, source.propertyKeyAccessRights, rights);
    const before = (await repo.findSourceGroup(tx, sourceKey, id))!.access_rights.map(toAccessRight);
    if (canonical(before) === canonical(rights)) return;
    await repo.replaceAccessRights(tx, id, rights);
    await recordAudit(tx, actor, { action: 'accessRights.set', targetType: 'accessRights', targetId: id, sourceKey, before, after: rights });
  });
}

/** Turns a source's property-key rights on or off (LKE's updateAccessRightsSettings); stored rights are kept either way. */
export async function setAccessRightsSettings(db: Database, actor: Principal | null, sourceKey: string, settings: { propertyKeyAccessRights: boolean }): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await requireSource(tx, sourceKey, 'update');
    if (before.propertyKeyAccessRights === settings.propertyKeyAccessRights) return;
    await repo.setSourceSetting(tx, sourceKey, settings.propertyKeyAccessRights);
    await recordAudit(tx, actor, { action: 'accessRightsSettings.set', targetType: 'accessRightsSettings', targetId: sourceKey, sourceKey, before, after: settings });
  });
}

/** The groups of the source a user of it sees (LKE's getGroupNames); with `action`, those that have it. */
export async function listGroupNames(db: Database, sourceKey: string, action?: string): Promise<GroupName[]> {
  // Admins and built-in Analysts pass the access hook on any key: the source must exist all the same.
  await requireSource(db, sourceKey);
  const rows = await repo.listGroupNames(db, sourceKey, action);
  return rows
    .filter((row) => row.source_key !== null || action === undefined || builtinHasAction(row.id, action))
    .map((row) => ({ id: row.id, uuid: row.uuid, name: row.name, sourceKey: row.source_key ?? EVERY_SOURCE }));
}

/** A page of the users of one of the source's groups (LKE's getGroupUsers). */
export async function listGroupUsers(db: Database, sourceKey: string, groupId: number, query: GroupUsersQuery): Promise<GroupUsers> {
  await requireSource(db, sourceKey);
  if (!(await repo.isSourceGroup(db, sourceKey, groupId))) throw notFound('group', groupId);
  return repo.listGroupUsers(db, groupId, {
    offset: query.offset ?? 0,
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    sortBy: query.sort_by ?? query.sortBy ?? 'id',
    sortDirection: query.sort_direction ?? query.sortDirection ?? 'asc',
  });
}

/**
 * The audit log's record of who joins and leaves groups (auth/membership.ts calls it through app.ts): one entry per
 * group, `group.addUser` with the user in `after`, `group.removeUser` with them in `before` (`…Application` for keys).
 */
export const recordMembershipChange: MembershipLog = async (tx, actor, { member, added, removed }) => {
  const kind = member.kind === 'user' ? 'User' : 'Application';
  const who = member.kind === 'user' ? { user: { id: member.id, username: member.name } } : { application: { id: member.id, name: member.name } };
  for (const group of added) {
    await recordAudit(tx, actor, { action: `group.add${kind}`, targetType: 'group', targetId: group.id, sourceKey: group.sourceKey ?? undefined, after: who });
  }
  for (const group of removed) {
    await recordAudit(tx, actor, { action: `group.remove${kind}`, targetType: 'group', targetId: group.id, sourceKey: group.sourceKey ?? undefined, before: who });
  }
};
