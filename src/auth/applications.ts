import type { Database, Queryable } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { checkGroupIds, logMembership, memberGroupsJson, membershipChange, toGroup, type GroupRow, type MembershipContext } from './membership.js';
import { randomToken, sha256Hex } from './passwords.js';
import type { Application } from './schemas.js';

export type { Application } from './schemas.js';

interface ApplicationRow {
  id: number;
  name: string;
  enabled: boolean;
  group_ids: number[];
  groups: GroupRow[];
  created_at: Date;
  updated_at: Date;
}

const SELECT_APPLICATION = `
  SELECT a.id, a.name, a.enabled, a.created_at, a.updated_at,
         COALESCE((SELECT array_agg(g.group_id ORDER BY g.group_id) FROM application_groups g WHERE g.application_id = a.id), '{}') AS group_ids,
         ${memberGroupsJson('application_groups', 'application_id', 'a.id')} AS groups
  FROM applications a`;

export const MAX_APPLICATION_NAME_LENGTH = 200;

function toApplication(row: ApplicationRow): Application {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    groups: row.groups.map(toGroup),
    rights: [],
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > MAX_APPLICATION_NAME_LENGTH) throw invalidParameter(`name must be 1 to ${MAX_APPLICATION_NAME_LENGTH} characters`, 'name');
  return trimmed;
}

async function findApplication(db: Queryable, id: number): Promise<ApplicationRow | undefined> {
  const { rows } = await db.query<ApplicationRow>(`${SELECT_APPLICATION} WHERE a.id = $1`, [id]);
  return rows[0];
}

async function setApplicationGroups(tx: Queryable, id: number, groups: readonly GroupRow[]): Promise<void> {
  await tx.query('DELETE FROM application_groups WHERE application_id = $1', [id]);
  await tx.query('INSERT INTO application_groups (application_id, group_id) SELECT $1, unnest($2::int[])', [id, groups.map((group) => group.id)]);
}

/** `context`: who creates the key, and the audit log its joining each group is recorded in. */
export async function createApplication(
  db: Database,
  input: { name: string; groups: number[]; enabled?: boolean | undefined },
  context: MembershipContext = {},
): Promise<Application> {
  const name = checkName(input.name);
  const apiKey = randomToken();
  const id = await db.transaction(async (tx) => {
    const groups = await checkGroupIds(tx, input.groups, 'groups');
    const { rows } = await tx.query<{ id: number }>('INSERT INTO applications (name, api_key_hash, enabled) VALUES ($1, $2, $3) RETURNING id', [
      name,
      sha256Hex(apiKey),
      input.enabled ?? true,
    ]);
    const id = rows[0]!.id;
    await setApplicationGroups(tx, id, groups);
    await logMembership(tx, context, membershipChange({ kind: 'application', id, name }, [], groups));
    return id;
  });
  return { ...toApplication((await findApplication(db, id))!), apiKey };
}

/**
 * Renames, enables or disables a key, or gives it other groups (LKE's `updateApplication`); the key itself is kept.
 * A call made with the key after this acts with its new groups.
 */
export async function updateApplication(
  db: Database,
  id: number,
  changes: { name?: string | undefined; enabled?: boolean | undefined; groups?: number[] | undefined },
  context: MembershipContext = {},
): Promise<Application> {
  const name = changes.name === undefined ? undefined : checkName(changes.name);
  await db.transaction(async (tx) => {
    const { rowCount } = await tx.query('SELECT 1 FROM applications WHERE id = $1 FOR UPDATE', [id]);
    if (rowCount === 0) throw notFound('application', id);
    const current = (await findApplication(tx, id))!;
    await tx.query('UPDATE applications SET name = COALESCE($2, name), enabled = COALESCE($3, enabled), updated_at = now() WHERE id = $1', [
      id,
      name ?? null,
      changes.enabled ?? null,
    ]);
    if (changes.groups === undefined) return;
    const groups = await checkGroupIds(tx, changes.groups, 'groups');
    await setApplicationGroups(tx, id, groups);
    await logMembership(tx, context, membershipChange({ kind: 'application', id, name: name ?? current.name }, current.groups, groups));
  });
  return toApplication((await findApplication(db, id))!);
}

export async function listApplications(db: Queryable): Promise<Application[]> {
  const { rows } = await db.query<ApplicationRow>(`${SELECT_APPLICATION} ORDER BY a.id`);
  return rows.map(toApplication);
}

/** The key leaves its groups with it: recorded, as any membership change, in `context`'s log. */
export async function deleteApplication(db: Database, id: number, context: MembershipContext = {}): Promise<void> {
  await db.transaction(async (tx) => {
    const application = await findApplication(tx, id);
    // Gone between the two statements (another delete): as unknown as before.
    const { rowCount } = application ? await tx.query('DELETE FROM applications WHERE id = $1', [id]) : { rowCount: 0 };
    if (!application || rowCount === 0) throw notFound('application', id);
    await logMembership(tx, context, membershipChange({ kind: 'application', id, name: application.name }, application.groups, []));
  });
}

/** The enabled application that has this key (its id, name and groups), or undefined when none has. */
export async function findApiKeyApplication(db: Queryable, apiKey: string): Promise<{ id: number; name: string; groupIds: number[] } | undefined> {
  const { rows } = await db.query<ApplicationRow>(
    `SELECT a.id, a.name, COALESCE((SELECT array_agg(g.group_id ORDER BY g.group_id) FROM application_groups g WHERE g.application_id = a.id), '{}') AS group_ids
     FROM applications a WHERE a.api_key_hash = $1 AND a.enabled`,
    [sha256Hex(apiKey)],
  );
  const row = rows[0];
  return row && { id: row.id, name: row.name, groupIds: row.group_ids };
}
