/**
 * Data sources: the graphs alerts run on. Below both alerts and webhooks, which name data sources by key
 * (an alert's source, a webhook subscription's filter) and check them here.
 */
import type { Queryable } from '../db/database.js';
import { AppError, invalidParameter, uniqueViolationAs } from '../errors.js';

export interface DataSource {
  key: string;
  name: string;
}

export const MAX_SOURCE_KEY_LENGTH = 64;
export const MAX_SOURCE_NAME_LENGTH = 200;
// The contract's rule for data source keys; it also keeps U+0000 and the like away from the database.
export const SOURCE_KEY_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_SOURCE_KEY_LENGTH}}$`);
// Keys that would make /api/<key>/… collide with the API's own paths.
const RESERVED_KEYS = new Set(['admin', 'auth', 'config', 'dataSources', 'openapi.json']);

export async function createDataSource(db: Queryable, input: DataSource): Promise<DataSource> {
  if (!SOURCE_KEY_PATTERN.test(input.key)) throw invalidParameter(`key "${input.key}" must match ${SOURCE_KEY_PATTERN.source}`);
  if (RESERVED_KEYS.has(input.key)) throw invalidParameter(`key "${input.key}" is reserved by the API's own paths: choose another`);
  const name = input.name.trim();
  if (!name || name.length > MAX_SOURCE_NAME_LENGTH) throw invalidParameter(`name must be 1 to ${MAX_SOURCE_NAME_LENGTH} characters`);
  try {
    await db.query('INSERT INTO data_sources (key, name) VALUES ($1, $2)', [input.key, name]);
  } catch (err) {
    throw uniqueViolationAs(err, { data_sources_pkey: `a data source with key "${input.key}" already exists` });
  }
  return { key: input.key, name };
}

export async function listDataSources(db: Queryable): Promise<DataSource[]> {
  const { rows } = await db.query<DataSource>('SELECT key, name FROM data_sources ORDER BY created_at, key');
  return rows;
}

export function dataSourceUnavailable(sourceKey: string): AppError {
  return new AppError('dataSource_unavailable', `no data source has the key "${sourceKey}"`);
}

/** Throws `dataSource_unavailable` unless every key names a data source. */
export async function requireDataSources(db: Queryable, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const unique = [...new Set(keys)];
  const { rows } = await db.query<{ key: string }>('SELECT key FROM data_sources WHERE key = ANY($1::text[])', [unique]);
  const known = new Set(rows.map((r) => r.key));
  const missing = unique.find((k) => !known.has(k));
  if (missing !== undefined) throw dataSourceUnavailable(missing);
}
