import type { Queryable } from '../db/database.js';
import type { AccessRight, TargetType } from './access-rights.js';
import type { GROUP_USERS_SORT, SORT_DIRECTIONS } from './schemas.js';

/** A group's row with what its answer needs: its user count and its stored rights. */
export interface GroupRecord {
  id: number;
  uuid: string;
  name: string;
  source_key: string | null;
  builtin: boolean;
  user_count: number;
  access_rights: StoredRight[];
  created_at: Date;
  updated_at: Date;
}

/** A right as group_access_rights holds it: `targetItemType` is '' but for property-key rights. */
export interface StoredRight {
  targetType: TargetType;
  targetItemType: string;
  targetName: string;
  type: string;
}

// Rights in one order (by target, names by code point whatever the database's collation), whatever order the PUT gave
// them in: a group's answer is the same list each time.
const SELECT_GROUP = `
  SELECT g.id, g.uuid, g.name, g.source_key, g.builtin, g.created_at, g.updated_at,
         (SELECT count(*) FROM user_groups m WHERE m.group_id = g.id) AS user_count,
         COALESCE((SELECT jsonb_agg(jsonb_build_object('targetType', r.target_type, 'targetItemType', r.target_item_type, 'targetName', r.target_name, 'type', r.type)
                                    ORDER BY r.target_type COLLATE "C", r.target_item_type COLLATE "C", r.target_name COLLATE "C")
                   FROM group_access_rights r WHERE r.group_id = g.id), '[]') AS access_rights
  FROM groups g`;

/** The groups of a data source: its own custom groups and the built-in ones (every source's), by id. */
export async function listSourceGroups(db: Queryable, sourceKey: string): Promise<GroupRecord[]> {
  const { rows } = await db.query<GroupRecord>(`${SELECT_GROUP} WHERE g.source_key = $1 OR g.source_key IS NULL ORDER BY g.id`, [sourceKey]);
  return rows;
}

/** One group of a data source (one of its own, or a built-in one); undefined for another source's or none. */
export async function findSourceGroup(db: Queryable, sourceKey: string, id: number): Promise<GroupRecord | undefined> {
  const { rows } = await db.query<GroupRecord>(`${SELECT_GROUP} WHERE g.id = $2 AND (g.source_key = $1 OR g.source_key IS NULL)`, [sourceKey, id]);
  return rows[0];
}

/**
 * Holds a group of the source until the transaction ends, so changes of one group (renames, rights, its deletion)
 * apply one after the other, each from what the one before left.
 */
export async function lockSourceGroup(tx: Queryable, sourceKey: string, id: number): Promise<{ id: number; name: string; builtin: boolean } | undefined> {
  const { rows } = await tx.query<{ id: number; name: string; builtin: boolean }>(
    'SELECT id, name, builtin FROM groups WHERE id = $2 AND (source_key = $1 OR source_key IS NULL) FOR UPDATE',
    [sourceKey, id],
  );
  return rows[0];
}

/**
 * The data source's access-right setting, or undefined when no source has the key. `lock`: `share` keeps the setting
 * from changing until the transaction ends (rights checked against it); `update` also serialises the group creations
 * of the source (their count). NO KEY UPDATE leaves the foreign-key checks of other rows (alerts, groups) unblocked.
 */
export async function findSourceSetting(db: Queryable, sourceKey: string, lock?: 'share' | 'update'): Promise<{ propertyKeyAccessRights: boolean } | undefined> {
  const clause = lock === 'share' ? ' FOR SHARE' : lock === 'update' ? ' FOR NO KEY UPDATE' : '';
  const { rows } = await db.query<{ propertyKeyAccessRights: boolean }>(
    `SELECT property_key_access_rights AS "propertyKeyAccessRights" FROM data_sources WHERE key = $1${clause}`,
    [sourceKey],
  );
  return rows[0];
}

export async function setSourceSetting(tx: Queryable, sourceKey: string, propertyKeyAccessRights: boolean): Promise<void> {
  await tx.query('UPDATE data_sources SET property_key_access_rights = $2 WHERE key = $1', [sourceKey, propertyKeyAccessRights]);
}

export async function countCustomGroups(db: Queryable, sourceKey: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*) AS count FROM groups WHERE source_key = $1', [sourceKey]);
  return rows[0]?.count ?? 0;
}

/** A new custom group; `uuid` as given, else a new one. */
export async function insertGroup(tx: Queryable, group: { sourceKey: string; name: string; uuid?: string | undefined }): Promise<number> {
  const { rows } = await tx.query<{ id: number }>(
    'INSERT INTO groups (name, builtin, source_key, uuid) VALUES ($1, false, $2, COALESCE($3::uuid, gen_random_uuid())) RETURNING id',
    [group.name, group.sourceKey, group.uuid ?? null],
  );
  return rows[0]!.id;
}

export async function renameGroup(tx: Queryable, id: number, name: string): Promise<void> {
  await tx.query('UPDATE groups SET name = $2, updated_at = now() WHERE id = $1', [id, name]);
}

/** Deletes a group: its memberships and rights go with it (foreign keys, 0015_teams.sql). */
export async function deleteGroup(tx: Queryable, id: number): Promise<void> {
  await tx.query('DELETE FROM groups WHERE id = $1', [id]);
}

/** Who is in a group, users and API keys, by id: what its deletion takes away. */
export async function groupMembers(tx: Queryable, id: number): Promise<{ userIds: number[]; applicationIds: number[] }> {
  const { rows } = await tx.query<{ userIds: number[]; applicationIds: number[] }>(
    `SELECT COALESCE((SELECT array_agg(user_id ORDER BY user_id) FROM user_groups WHERE group_id = $1), '{}') AS "userIds",
            COALESCE((SELECT array_agg(application_id ORDER BY application_id) FROM application_groups WHERE group_id = $1), '{}') AS "applicationIds"`,
    [id],
  );
  return rows[0]!;
}

/** Replaces a group's whole set of rights with `rights` (one statement for the lot, up to MAX_ACCESS_RIGHTS). */
export async function replaceAccessRights(tx: Queryable, id: number, rights: readonly AccessRight[]): Promise<void> {
  await tx.query('DELETE FROM group_access_rights WHERE group_id = $1', [id]);
  if (rights.length > 0) {
    await tx.query(
      `INSERT INTO group_access_rights (group_id, target_type, target_item_type, target_name, type)
       SELECT $1::int, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])`,
      [
        id,
        rights.map((right) => right.targetType),
        rights.map((right) => ('targetItemType' in right ? right.targetItemType : '')),
        rights.map((right) => right.targetName),
        rights.map((right) => right.type),
      ],
    );
  }
  await tx.query('UPDATE groups SET updated_at = now() WHERE id = $1', [id]);
}

/** The ids among `ids` that are alerts of the data source. */
export async function alertsOfSource(db: Queryable, sourceKey: string, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: number }>('SELECT id FROM alerts WHERE source_key = $1 AND id = ANY($2::int[])', [sourceKey, [...new Set(ids)]]);
  return new Set(rows.map((row) => row.id));
}

export interface GroupNameRow {
  id: number;
  uuid: string;
  name: string;
  source_key: string | null;
}

/** The names of a source's groups, custom and built-in, by id; with `action`, the custom ones that have it. */
export async function listGroupNames(db: Queryable, sourceKey: string, action?: string): Promise<GroupNameRow[]> {
  const { rows } = await db.query<GroupNameRow>(
    `SELECT g.id, g.uuid, g.name, g.source_key FROM groups g
     WHERE (g.source_key = $1 AND ($2::text IS NULL OR EXISTS (
              SELECT 1 FROM group_access_rights r WHERE r.group_id = g.id AND r.target_type = 'action' AND r.target_name = $2 AND r.type = 'do')))
        OR g.source_key IS NULL
     ORDER BY g.id`,
    [sourceKey, action ?? null],
  );
  return rows;
}

const SORT_COLUMNS: Record<(typeof GROUP_USERS_SORT)[number], string> = { id: 'u.id', username: 'lower(u.username)', email: 'lower(u.email)' };

/** A page of a group's users, sorted (then by id, so pages never overlap), and how many it has in all. */
export async function listGroupUsers(
  db: Queryable,
  groupId: number,
  page: { offset: number; limit: number; sortBy: (typeof GROUP_USERS_SORT)[number]; sortDirection: (typeof SORT_DIRECTIONS)[number] },
): Promise<{ found: number; results: { id: number; username: string; email: string }[] }> {
  // Both parts of the ORDER BY come from fixed lists (SORT_COLUMNS, asc/desc), never from the request's text.
  const direction = page.sortDirection === 'desc' ? 'DESC' : 'ASC';
  const { rows } = await db.query<{ id: number; username: string; email: string }>(
    `SELECT u.id, u.username, u.email FROM user_groups m JOIN users u ON u.id = m.user_id
     WHERE m.group_id = $1 ORDER BY ${SORT_COLUMNS[page.sortBy]} ${direction}, u.id ${direction} OFFSET $2 LIMIT $3`,
    [groupId, page.offset, page.limit],
  );
  const count = await db.query<{ count: number }>('SELECT count(*) AS count FROM user_groups WHERE group_id = $1', [groupId]);
  return { found: count.rows[0]?.count ?? 0, results: rows };
}

/** Whether the group is one of the source's (its own, or a built-in one). */
export async function isSourceGroup(db: Queryable, sourceKey: string, id: number): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM groups WHERE id = $2 AND (source_key = $1 OR source_key IS NULL)', [sourceKey, id]);
  return rowCount > 0;
}
