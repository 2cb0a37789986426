import type { Database, Queryable } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { groupsOf } from './groups.js';
import { randomToken, sha256Hex } from './passwords.js';
import type { Application } from './schemas.js';
import { checkGroups } from './users.service.js';

export type { Application } from './schemas.js';

interface ApplicationRow {
  id: number;
  name: string;
  enabled: boolean;
  group_ids: number[];
  created_at: Date;
  updated_at: Date;
}

const SELECT_APPLICATION = `
  SELECT a.id, a.name, a.enabled, a.created_at, a.updated_at,
         COALESCE((SELECT array_agg(g.group_id ORDER BY g.group_id) FROM application_groups g WHERE g.application_id = a.id), '{}') AS group_ids
  FROM applications a`;

export const MAX_APPLICATION_NAME_LENGTH = 200;

function toApplication(row: ApplicationRow): Application {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    groups: groupsOf(row.group_ids),
    rights: [],
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function createApplication(db: Database, input: { name: string; groups: number[]; enabled?: boolean | undefined }): Promise<Application> {
  const name = input.name.trim();
  if (!name || name.length > MAX_APPLICATION_NAME_LENGTH) throw invalidParameter(`name must be 1 to ${MAX_APPLICATION_NAME_LENGTH} characters`, 'name');
  const groupIds = checkGroups(input.groups);
  const apiKey = randomToken();
  const id = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO applications (name, api_key_hash, enabled) VALUES ($1, $2, $3) RETURNING id', [
      name,
      sha256Hex(apiKey),
      input.enabled ?? true,
    ]);
    await tx.query('INSERT INTO application_groups (application_id, group_id) SELECT $1, unnest($2::int[])', [rows[0]!.id, groupIds]);
    return rows[0]!.id;
  });
  const { rows } = await db.query<ApplicationRow>(`${SELECT_APPLICATION} WHERE a.id = $1`, [id]);
  return { ...toApplication(rows[0]!), apiKey };
}

export async function listApplications(db: Queryable): Promise<Application[]> {
  const { rows } = await db.query<ApplicationRow>(`${SELECT_APPLICATION} ORDER BY a.id`);
  return rows.map(toApplication);
}

export async function deleteApplication(db: Queryable, id: number): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM applications WHERE id = $1', [id]);
  if (rowCount === 0) throw notFound('application', id);
}

/** The enabled application that has this key (its id, name and groups), or undefined when none has. */
export async function findApiKeyApplication(db: Queryable, apiKey: string): Promise<{ id: number; name: string; groupIds: number[] } | undefined> {
  const { rows } = await db.query<ApplicationRow>(`${SELECT_APPLICATION} WHERE a.api_key_hash = $1 AND a.enabled`, [sha256Hex(apiKey)]);
  const row = rows[0];
  return row && { id: row.id, name: row.name, groupIds: row.group_ids };
}
