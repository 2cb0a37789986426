/**
 * What alerts and the graph routes need of a graph, whichever engine holds it: run one Cypher statement with
 * limits that hold, reading rows as they come, and fetch one node or edge by its id. The adapters are
 * embedded/embedded-graph.ts (Kùzu, in a child process) and bolt/bolt-graph.ts (Neo4j and Memgraph).
 */
import { AppError } from '../errors.js';
import type { GraphEdge, GraphNode, GraphRow } from './items.js';

export interface RunOptions {
  params?: Record<string, unknown>;
  /** The query is stopped after this long (the engine's own time-out, and a hard stop behind it). */
  timeoutMs: number;
  /** Reading stops after this many rows; `truncated` tells whether there were more. */
  maxRows: number;
  /** A read-only run refuses any write, however it is hidden (the engine's read-only transaction decides). */
  readOnly: boolean;
  /**
   * False: nodes and edges come without their properties (ids, labels, types and ends only), which is all an
   * alert run records, and reading them is most of the cost of moving a row. Default true.
   */
  properties?: boolean;
  signal?: AbortSignal;
}

/** The rows of one run, read as they come; `close()` stops reading (and the query) early. */
export interface RowStream extends AsyncIterable<GraphRow> {
  readonly columns: readonly string[];
  /** Set once the stream ended: whether rows were left unread because of `maxRows`. */
  readonly truncated: boolean;
  close(): Promise<void>;
}

export type GraphVendor = 'embedded' | 'neo4j';

export interface GraphSource {
  readonly vendor: GraphVendor;
  /** Starts a query; rejects with a GraphError when it cannot start (syntax, write refused, unreachable). */
  run(query: string, options: RunOptions): Promise<RowStream>;
  node(id: string): Promise<GraphNode | undefined>;
  edge(id: string): Promise<GraphEdge | undefined>;
  /** Checks that the graph opens and answers (reached, credentials and database accepted); a GraphError says which failed. */
  verify(): Promise<void>;
  /** A cheap round trip, for health: resolves when the graph answers. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Why a graph operation failed, as the API's error keys name it. */
export type GraphErrorKey = 'bad_graph_request' | 'graph_request_timeout' | 'data_source_unavailable' | 'write_forbidden';

/** A graph's failure, as the API answers it (an AppError: the error handler gives it its catalogue status). */
export class GraphError extends AppError {
  declare readonly key: GraphErrorKey;
  constructor(key: GraphErrorKey, message: string) {
    super(key, message);
    this.name = 'GraphError';
  }
}

/**
 * The engine refusing a query's text (a syntax error, a write where only reads are allowed) is about the request
 * field that holds it: the error names that field so a form can show the message beside the query.
 */
export function queryRefused(err: unknown, field: string): unknown {
  if (err instanceof GraphError && (err.key === 'bad_graph_request' || err.key === 'write_forbidden')) return new AppError(err.key, err.message, undefined, field);
  return err;
}

/** Reads every row of a stream (for small answers: a node lookup, a test). */
export async function allRows(stream: RowStream): Promise<GraphRow[]> {
  const rows: GraphRow[] = [];
  for await (const row of stream) rows.push(row);
  return rows;
}
