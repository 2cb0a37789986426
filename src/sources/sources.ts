/**
 * Data sources: the graphs alerts run on. Below both alerts and webhooks, which name data sources by key
 * (an alert's source, a webhook subscription's filter) and check them here.
 */
import type { Database, Queryable } from '../db/database.js';
import { AppError, invalidParameter, notFound, uniqueViolationAs } from '../errors.js';
import type { Keyring } from '../secrets/keyring.js';
import { openSecret, sealSecret } from '../secrets/secret-box.js';
import { checkGraphInput, type GraphAnswer, type GraphInput, type StoredGraph } from './graph-settings.js';
import type { GraphRegistry } from './graph-registry.js';
import { MAX_SOURCE_NAME_LENGTH, SOURCE_KEY_PATTERN } from './schemas.js';

export interface DataSource {
  key: string;
  name: string;
  /** Whether the property-key access rights of its custom groups apply (PATCH /api/admin/:sourceKey/accessRights/settings). */
  propertyKeyAccessRights: boolean;
  /** Absent: the source has no graph, and its alerts' matches are reported through the API. */
  graph?: GraphAnswer;
}

// Keys that would make /api/<key>/… collide with the API's own paths.
const RESERVED_KEYS = new Set(['admin', 'auth', 'config', 'dataSources', 'openapi.json']);

interface SourceRow {
  key: string;
  name: string;
  property_key_access_rights: boolean;
  graph: StoredGraph | null;
  password_set: boolean;
  password_sealed: string | null;
}

/** What creating or changing a source's graph needs: the keys to seal a password, the graphs to check it with. */
export interface SourceGraphs {
  keyring: Keyring;
  graphs: GraphRegistry;
}

const SELECT_SOURCE =
  'SELECT key, name, property_key_access_rights, graph, graph_password_sealed IS NOT NULL AS password_set, graph_password_sealed AS password_sealed FROM data_sources';

function toDataSource(row: SourceRow): DataSource {
  const source: DataSource = { key: row.key, name: row.name, propertyKeyAccessRights: row.property_key_access_rights };
  if (row.graph) source.graph = row.graph.vendor === 'neo4j' ? { ...row.graph, passwordSet: row.password_set } : row.graph;
  return source;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > MAX_SOURCE_NAME_LENGTH) throw invalidParameter(`name must be 1 to ${MAX_SOURCE_NAME_LENGTH} characters`);
  return trimmed;
}

/**
 * Checks that the graph answers before anything is stored: a Bolt server is reached and the credentials and
 * database checked (the error names which failed); an embedded graph is opened, and kept open in this process.
 */
async function checkGraphReachable(sourceKey: string, graph: StoredGraph, password: string | undefined, deps: SourceGraphs): Promise<void> {
  const adapter = deps.graphs.connect(sourceKey, graph, password);
  try {
    await adapter.verify();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new AppError('data_source_unavailable', `graph: ${message}`);
  } finally {
    await adapter.close();
  }
}

export async function createDataSource(db: Queryable, input: { key: string; name: string; graph?: GraphInput | undefined }, deps: SourceGraphs): Promise<DataSource> {
  if (!SOURCE_KEY_PATTERN.test(input.key)) throw invalidParameter(`key "${input.key}" must match ${SOURCE_KEY_PATTERN.source}`);
  if (RESERVED_KEYS.has(input.key)) throw invalidParameter(`key "${input.key}" is reserved by the API's own paths: choose another`);
  const name = checkName(input.name);
  const checked = input.graph ? checkGraphInput(input.graph, { graph: null, passwordSet: false }) : undefined;
  const { rows: taken } = await db.query('SELECT 1 FROM data_sources WHERE key = $1', [input.key]);
  if (taken.length) throw new AppError('already_exists', `a data source with key "${input.key}" already exists`);
  if (checked) await checkGraphReachable(input.key, checked.graph, checked.password, deps);
  try {
    const { rows } = await db.query<SourceRow>(
      `INSERT INTO data_sources (key, name, graph, graph_password_sealed) VALUES ($1, $2, $3, $4)
       RETURNING key, name, property_key_access_rights, graph, graph_password_sealed IS NOT NULL AS password_set, graph_password_sealed AS password_sealed`,
      [input.key, name, checked ? JSON.stringify(checked.graph) : null, checked?.password ? sealSecret(checked.password, deps.keyring) : null],
    );
    return toDataSource(rows[0]!);
  } catch (err) {
    throw uniqueViolationAs(err, { data_sources_pkey: `a data source with key "${input.key}" already exists` });
  }
}

export async function findDataSource(db: Queryable, key: string): Promise<DataSource> {
  const { rows } = await db.query<SourceRow>(`${SELECT_SOURCE} WHERE key = $1`, [key]);
  if (!rows[0]) throw notFound('data source', key);
  return toDataSource(rows[0]);
}

/**
 * Changes a source's name or graph. `graph: null` removes the graph (the source's alerts then take reported
 * matches); a new graph is checked as on creation. The embedded graph's files are never deleted here.
 */
export async function updateDataSource(
  db: Database,
  key: string,
  changes: { name?: string | undefined; graph?: GraphInput | null | undefined },
  deps: SourceGraphs,
): Promise<DataSource> {
  const name = changes.name === undefined ? undefined : checkName(changes.name);
  const { rows: found } = await db.query<SourceRow>(`${SELECT_SOURCE} WHERE key = $1`, [key]);
  const before = found[0];
  if (!before) throw notFound('data source', key);
  let graphUpdate = '';
  const params: unknown[] = [key, name ?? null];
  if (changes.graph === null) {
    graphUpdate = ', graph = NULL, graph_password_sealed = NULL';
  } else if (changes.graph !== undefined) {
    const checked = checkGraphInput(changes.graph, { graph: before.graph, passwordSet: before.password_set });
    if (checked.password !== undefined || needsReconnect(before.graph, checked.graph)) {
      // An embedded graph this process holds is let go of first: checking opens it again, and Kùzu locks its folder.
      if (before.graph?.vendor === 'embedded') await deps.graphs.forget(key);
      await checkGraphReachable(key, checked.graph, checked.password ?? storedPassword(before, deps.keyring), deps);
    }
    params.push(JSON.stringify(checked.graph));
    graphUpdate = `, graph = $3`;
    if (checked.password !== undefined) {
      params.push(sealSecret(checked.password, deps.keyring));
      graphUpdate += ', graph_password_sealed = $4';
    } else if (checked.graph.vendor === 'embedded') {
      graphUpdate += ', graph_password_sealed = NULL';
    }
  }
  const { rows } = await db.query<SourceRow>(
    `UPDATE data_sources SET name = COALESCE($2, name)${graphUpdate}, updated_at = clock_timestamp() WHERE key = $1
     RETURNING key, name, property_key_access_rights, graph, graph_password_sealed IS NOT NULL AS password_set`,
    params,
  );
  await deps.graphs.forget(key);
  return toDataSource(rows[0]!);
}

/** Whether a change of settings reaches another graph (changing only `allowWrites` does not). */
function needsReconnect(before: StoredGraph | null, after: StoredGraph): boolean {
  if (before?.vendor !== after.vendor) return true;
  if (before.vendor !== 'neo4j' || after.vendor !== 'neo4j') return false;
  return before.url !== after.url || before.user !== after.user || before.database !== after.database;
}

function storedPassword(row: SourceRow, keyring: Keyring): string | undefined {
  return row.password_sealed ? openSecret(row.password_sealed, keyring) : undefined;
}

/** Deletes a source, its alerts and their cases; its embedded graph is closed and its files kept (docs/graph.md). */
export async function deleteDataSource(db: Queryable, key: string, deps: Pick<SourceGraphs, 'graphs'>): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM data_sources WHERE key = $1', [key]);
  if (!rowCount) throw notFound('data source', key);
  await deps.graphs.forget(key);
}

export async function listDataSources(db: Queryable): Promise<DataSource[]> {
  const { rows } = await db.query<SourceRow>(`${SELECT_SOURCE} ORDER BY created_at, key`);
  return rows.map(toDataSource);
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
