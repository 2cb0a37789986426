import type { Queryable } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { requireDataSources } from '../sources/sources.js';

export interface Alert {
  id: number;
  sourceKey: string;
  title: string;
  description: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface AlertRow {
  id: number;
  source_key: string;
  title: string;
  description: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export function toAlert(row: AlertRow): Alert {
  return {
    id: row.id,
    sourceKey: row.source_key,
    title: row.title,
    description: row.description,
    enabled: row.enabled,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const MAX_TITLE = 200;
export const MAX_DESCRIPTION = 4000;

function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed || trimmed.length > MAX_TITLE) throw invalidParameter(`title must be 1 to ${MAX_TITLE} characters`);
  return trimmed;
}

function checkDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION) throw invalidParameter(`description must be at most ${MAX_DESCRIPTION} characters`);
  return description;
}

export async function createAlert(
  db: Queryable,
  sourceKey: string,
  input: { title: string; description?: string | undefined; enabled?: boolean | undefined },
): Promise<Alert> {
  const title = checkTitle(input.title);
  const description = checkDescription(input.description ?? '');
  await requireDataSources(db, [sourceKey]);
  const { rows } = await db.query<AlertRow>(
    'INSERT INTO alerts (source_key, title, description, enabled) VALUES ($1, $2, $3, $4) RETURNING *',
    [sourceKey, title, description, input.enabled ?? true],
  );
  return toAlert(rows[0]!);
}

export async function updateAlert(
  db: Queryable,
  sourceKey: string,
  id: number,
  changes: { title?: string | undefined; description?: string | undefined; enabled?: boolean | undefined },
): Promise<Alert> {
  const title = changes.title === undefined ? null : checkTitle(changes.title);
  const description = changes.description === undefined ? null : checkDescription(changes.description);
  await findAlert(db, sourceKey, id);
  const { rows } = await db.query<AlertRow>(
    `UPDATE alerts SET title = COALESCE($3, title), description = COALESCE($4, description),
       enabled = COALESCE($5, enabled), updated_at = now() WHERE id = $1 AND source_key = $2 RETURNING *`,
    [id, sourceKey, title, description, changes.enabled ?? null],
  );
  return toAlert(rows[0]!);
}

/** The alert, or 404 when it does not exist in that data source (400 when the source itself does not). */
export async function findAlert(db: Queryable, sourceKey: string, id: number, lock = false): Promise<AlertRow> {
  const { rows } = await db.query<AlertRow>(`SELECT * FROM alerts WHERE id = $1 AND source_key = $2${lock ? ' FOR SHARE' : ''}`, [id, sourceKey]);
  if (rows[0]) return rows[0];
  await requireDataSources(db, [sourceKey]);
  throw notFound('alert', id);
}

export async function listAlerts(db: Queryable, sourceKey: string): Promise<Alert[]> {
  await requireDataSources(db, [sourceKey]);
  const { rows } = await db.query<AlertRow>('SELECT * FROM alerts WHERE source_key = $1 ORDER BY id', [sourceKey]);
  return rows.map(toAlert);
}

export async function deleteAlert(db: Queryable, sourceKey: string, id: number): Promise<void> {
  await findAlert(db, sourceKey, id);
  await db.query('DELETE FROM alerts WHERE id = $1', [id]);
}
