/**
 * Inside the Kùzu process: each pooled connection's prepared statements of read-only runs, by query text, the most
 * recently used kept (alerts and the console run the same queries again and again, and a prepare is a parse, a
 * bind and a plan).
 *
 * Only statements prepared inside a read-only transaction are kept (Kùzu refuses a write's prepare there), and
 * only once their plan passed the allow-list, so a statement from the cache is one that a fresh prepare and check
 * would have given; its execution still runs in a read-only transaction, with the run's own parameters and time-out. Kùzu binds a statement to its connection (another
 * connection cannot execute it), hence one cache a connection. A run that may write (DDL included) or a load
 * clears every cache: a statement planned on the old tables is not kept past a change of them.
 */
import type { Connection, PreparedStatement } from 'kuzu';

/** Statements kept per connection. */
export const STATEMENTS_PER_CONNECTION = 64;

// The process's connections are pooled for its life (kuzu-process.ts), so holding them here keeps nothing extra alive.
/** A kept statement, and whether its plan walks relationships recursively (kuzu-plan.ts, KuzuPlan.recursive). */
export interface KeptStatement {
  statement: PreparedStatement;
  recursive: boolean;
}

const caches = new Map<Connection, Map<string, KeptStatement>>();

/** The statement of `query` kept on `conn`, or undefined (the most recently used is kept longest). */
export function keptStatement(conn: Connection, query: string): KeptStatement | undefined {
  const cache = caches.get(conn);
  const kept = cache?.get(query);
  if (kept) {
    // Most recently used last: a Map keeps its keys in the order they were set.
    cache!.delete(query);
    cache!.set(query, kept);
  }
  return kept;
}

/**
 * Keeps `statement` of `query` on `conn`: one prepared read-only whose plan passed the allow-list (kuzu-plan.ts)
 * on the tables as they are (a change of them clears every cache).
 */
export function keepStatement(conn: Connection, query: string, kept: KeptStatement): void {
  let cache = caches.get(conn);
  if (!cache) {
    cache = new Map();
    caches.set(conn, cache);
  }
  cache.set(query, kept);
  if (cache.size > STATEMENTS_PER_CONNECTION) cache.delete(cache.keys().next().value!);
}

/** After a run that may have changed the tables: every connection prepares afresh. */
export function clearStatements(): void {
  caches.clear();
}
