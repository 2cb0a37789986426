/**
 * The graphs of this process's data sources, opened when first needed and kept open: one adapter per source
 * (src/graph/), reopened when the source's settings change (another process may have changed them: the row's
 * `updated_at` tells). An embedded graph is held by one process at a time (Kùzu locks its folder): where another
 * process holds it, this one answers `data_source_unavailable` saying so, and does not run its alerts.
 */
import path from 'node:path';
import { namedStatement, type Queryable } from '../db/database.js';
import { AppError } from '../errors.js';
import { BoltGraph } from '../graph/bolt/bolt-graph.js';
import { EmbeddedGraph } from '../graph/embedded/embedded-graph.js';
import { GraphError, type GraphSource } from '../graph/graph-source.js';
import type { Logger } from '../logger.js';
import type { Keyring } from '../secrets/keyring.js';
import { openSecret } from '../secrets/secret-box.js';
import type { StoredGraph } from './graph-settings.js';
import type { ReceiverPolicy } from '../network/receiver-policy.js';
import type { AddressResolver } from '../network/guarded-connector.js';

/** Where the embedded graph of `sourceKey` keeps its files (a key's characters are safe in a path). */
export function embeddedGraphFolder(dataDir: string, sourceKey: string): string {
  return path.join(dataDir, 'graphs', sourceKey);
}

/**
 * How soon a graph this process could not open (another process held it) is tried again by the alert schedule: a
 * process takes over an embedded graph within this and the time to open it of its holder's death
 * (test/alerts/alert-run-lease.test.ts), and each try, a Kùzu process that finds the folder locked, costs about 7% of
 * a core while another holds it (bench/README.md, "Start").
 */
export const RETRY_OPEN_MS = 5_000;
// Read at every graph query and every alert run (a source's graph may change through any process): a named
// statement, parsed and planned once per connection.
const SOURCE_GRAPH = namedStatement('source_graph_v1', 'SELECT graph, graph_password_sealed, updated_at::text AS version FROM data_sources WHERE key = $1');

export interface GraphRegistryOptions {
  dataDir: string;
  bufferPoolBytes: number;
  keyring: Keyring;
  logger: Logger;
  /** Where Bolt graphs' connections may go: the receivers' policy (RECEIVER_*); the default policy when unset. */
  receiverPolicy?: ReceiverPolicy | undefined;
  /** Where Bolt graphs' host names are resolved; dns.lookup unless a test maps a name of its own. */
  resolve?: AddressResolver | undefined;
}

interface Entry {
  version: string;
  settings: StoredGraph;
  graph: GraphSource;
}

export interface OpenedGraph {
  graph: GraphSource;
  settings: StoredGraph;
}

/** How long one check of the graphs' health answers every caller (GraphRegistry.health). */
const HEALTH_REUSE_MS = 1_000;

/** The health of one source's graph, as last checked. */
export interface GraphHealth {
  sourceKey: string;
  vendor: StoredGraph['vendor'];
  up: boolean;
  latencyMs?: number;
  reason?: string;
}

export class GraphRegistry {
  readonly #options: GraphRegistryOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #opening = new Map<string, Promise<Entry>>();
  #closed = false;
  // Sources whose graph failed to open, logged once until it opens (a graph held elsewhere must not flood the log).
  readonly #failing = new Set<string>();
  readonly #failedAt = new Map<string, number>();
  /** The last check of the graphs' health, shared for HEALTH_REUSE_MS (health). */
  #lastHealth: { at: number; answer: Promise<GraphHealth[]> } | undefined;

  constructor(options: GraphRegistryOptions) {
    this.#options = options;
  }

  embeddedFolder(sourceKey: string): string {
    return embeddedGraphFolder(this.#options.dataDir, sourceKey);
  }

  /** Opens an adapter for `settings` without keeping it: for checking a connection before anything is stored. */
  connect(sourceKey: string, settings: StoredGraph, password: string | undefined): GraphSource {
    const label = `data source "${sourceKey}"`;
    if (settings.vendor === 'embedded') {
      return new EmbeddedGraph({ folder: this.embeddedFolder(sourceKey), bufferPoolBytes: this.#options.bufferPoolBytes, label });
    }
    const { receiverPolicy: policy, resolve, logger } = this.#options;
    return new BoltGraph({ url: settings.url, user: settings.user, password: password ?? '', database: settings.database, label, policy, resolve, logger });
  }

  /**
   * The graph of `sourceKey`, opened if needed; undefined when the source has no graph. Throws
   * `dataSource_unavailable` (400) when no source has that key, `data_source_unavailable` (503) when the graph
   * cannot be opened.
   */
  async open(db: Queryable, sourceKey: string): Promise<OpenedGraph | undefined> {
    const { rows } = await db.query<{ graph: StoredGraph | null; graph_password_sealed: string | null; version: string }>(SOURCE_GRAPH, [sourceKey]);
    const row = rows[0];
    if (!row) throw new AppError('dataSource_unavailable', `no data source has the key "${sourceKey}"`);
    if (!row.graph) {
      await this.forget(sourceKey);
      return undefined;
    }
    const current = this.#entries.get(sourceKey);
    if (current?.version === row.version) return current;
    let opening = this.#opening.get(sourceKey);
    if (!opening) {
      opening = this.#openEntry(sourceKey, row.graph, row.graph_password_sealed, row.version).finally(() => this.#opening.delete(sourceKey));
      this.#opening.set(sourceKey, opening);
    }
    return opening;
  }

  /** The graph this process holds for `sourceKey` now, as last opened: no database read, so maybe stale (see open). */
  held(sourceKey: string): OpenedGraph | undefined {
    return this.#entries.get(sourceKey);
  }

  /** False when this process's last try to open the source's graph failed (and none succeeded since). */
  reachable(sourceKey: string): boolean {
    return !this.#failing.has(sourceKey);
  }

  /**
   * The sources with an embedded graph this process holds or can open now: where it may run their alerts. A graph
   * it could not open (another process holds it) is tried again after RETRY_OPEN_MS, not at every call.
   */
  async servableEmbedded(db: Queryable): Promise<string[]> {
    const { rows } = await db.query<{ key: string }>(`SELECT key FROM data_sources WHERE graph->>'vendor' = 'embedded' ORDER BY key`);
    const servable: string[] = [];
    for (const { key } of rows) {
      if (this.#entries.has(key)) {
        servable.push(key);
        continue;
      }
      const failedAt = this.#failedAt.get(key);
      if (failedAt !== undefined && Date.now() - failedAt < RETRY_OPEN_MS) continue;
      try {
        await this.open(db, key);
        servable.push(key);
      } catch {
        this.#failedAt.set(key, Date.now());
      }
    }
    return servable;
  }

  /** The graph of a source, or a clear refusal: no graph (matches are reported through the API), or unreachable. */
  async require(db: Queryable, sourceKey: string): Promise<OpenedGraph> {
    const opened = await this.open(db, sourceKey);
    if (!opened) throw new AppError('bad_graph_request', `data source "${sourceKey}" has no graph: give it one (PATCH /api/admin/sources/${sourceKey}) to run queries`);
    return opened;
  }

  /** The graphs this process has open now. */
  opened(): { sourceKey: string; graph: GraphSource; settings: StoredGraph }[] {
    return [...this.#entries].map(([sourceKey, entry]) => ({ sourceKey, graph: entry.graph, settings: entry.settings }));
  }

  /** Closes the graph of `sourceKey` (its settings changed, or it was deleted). */
  async forget(sourceKey: string): Promise<void> {
    const entry = this.#entries.get(sourceKey);
    if (!entry) return;
    this.#entries.delete(sourceKey);
    await entry.graph.close();
  }

  /**
   * Every graph's health, checked at most once a second (HEALTH_REUSE_MS): readiness answers anyone, and each check
   * opens the graphs not open (an embedded one that cannot open starts a process each time), so callers within the
   * second, or while a check runs, share its answer.
   */
  health(db: Queryable, timeoutMs: number): Promise<GraphHealth[]> {
    const last = this.#lastHealth;
    if (last && performance.now() - last.at < HEALTH_REUSE_MS) return last.answer;
    const answer = this.#checkHealth(db, timeoutMs);
    this.#lastHealth = { at: performance.now(), answer };
    // A check that failed is not shared past its own callers.
    answer.catch(() => {
      if (this.#lastHealth?.answer === answer) this.#lastHealth = undefined;
    });
    return answer;
  }

  /** Checks every graph of `sources`: reachable or not, and how long a round trip took. One graph down fails nothing else. */
  async #checkHealth(db: Queryable, timeoutMs: number): Promise<GraphHealth[]> {
    const { rows } = await db.query<{ key: string; graph: StoredGraph }>('SELECT key, graph FROM data_sources WHERE graph IS NOT NULL ORDER BY key');
    return Promise.all(
      rows.map(async ({ key, graph }): Promise<GraphHealth> => {
        const started = performance.now();
        try {
          const opened = await this.open(db, key);
          await opened!.graph.ping(timeoutMs);
          return { sourceKey: key, vendor: graph.vendor, up: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
        } catch (err) {
          return { sourceKey: key, vendor: graph.vendor, up: false, reason: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#opening.values()]);
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.allSettled(entries.map((entry) => entry.graph.close()));
  }

  async #openEntry(sourceKey: string, settings: StoredGraph, sealedPassword: string | null, version: string): Promise<Entry> {
    if (this.#closed) throw new GraphError('data_source_unavailable', 'the service is stopping');
    await this.forget(sourceKey);
    const password = sealedPassword ? openSecret(sealedPassword, this.#options.keyring) : undefined;
    const graph = this.connect(sourceKey, settings, password);
    const began = performance.now();
    try {
      // A graph that must be started (the embedded graph's Kùzu process) is started now, so one that another process
      // holds fails here; a Bolt graph connects at its first call.
      if (graph.open) {
        await graph.open();
        // Its Kùzu process started and read its catalogue: what a start with many graphs waits for (docs/operations.md).
        this.#options.logger.info({ sourceKey, durationMs: Math.round(performance.now() - began) }, 'embedded graph opened');
      }
    } catch (err) {
      await graph.close();
      if (!this.#failing.has(sourceKey)) this.#options.logger.warn({ sourceKey, reason: err instanceof Error ? err.message : String(err) }, 'graph not opened');
      this.#failing.add(sourceKey);
      throw err;
    }
    this.#failing.delete(sourceKey);
    this.#failedAt.delete(sourceKey);
    const entry = { version, settings, graph };
    this.#entries.set(sourceKey, entry);
    return entry;
  }
}
