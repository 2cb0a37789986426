/**
 * What alerts and the graph routes need of a graph, whichever engine holds it: run one Cypher statement with
 * limits that hold, reading rows as they come, and fetch one node or edge by its id. The adapters are
 * embedded/embedded-graph.ts (Kùzu, in a child process) and bolt/bolt-graph.ts (Neo4j and Memgraph).
 */
import { AppError } from '../errors.js';
import type { GraphEdge, GraphNode, GraphVendor } from './graph-schemas.js';
import { Subgraph, type GraphRow } from './items.js';

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
  /**
   * The most of the engine's worker threads the query may use at once (the embedded graph: Kùzu's threads, all of
   * them when absent; Bolt ignores it). How a graph's threads are shared: src/sources/graph-share.ts.
   */
  threads?: number;
  signal?: AbortSignal;
}

/** The rows of one run, read as they come; `close()` stops reading (and the query) early. */
export interface RowStream extends AsyncIterable<GraphRow> {
  readonly columns: readonly string[];
  /** Set once the stream ended: whether rows were left unread because of `maxRows`. */
  readonly truncated: boolean;
  /**
   * The rows in batches of up to `batchRows`, each known first by its rows' match keys (match-identity.ts): read
   * instead of iterating the rows. An engine that makes them where it reads the rows (the embedded graph) moves a row
   * only when asked for, so an alert run moves none of the matches an earlier run recorded; the others make them of
   * the rows read (row-identity.ts, identifiedRows). The stream is not closed when the batches end (their rows may
   * still be asked for): the caller closes it.
   */
  identified(batchRows: number): AsyncIterable<IdentifiedBatch>;
  /**
   * True when the engine works its answer out as it is read (a Bolt server): reading it is waiting for the query, so
   * a reader that holds a lock reads it whole first (alerts/read-ahead.ts). False when the answer was made as the
   * query started (the embedded graph).
   */
  readonly madeAsRead: boolean;
  close(): Promise<void>;
}

/**
 * A batch of rows, by their match keys: `matchKey` of each row's nodes and edges (what its match identity hashes),
 * NO_MATCH or TOO_LARGE included. Keys, not identities: an alert run hashes only those it does not know recorded.
 */
export interface IdentifiedBatch {
  readonly keys: readonly string[];
  /**
   * The rows at `positions` (ascending indices into `keys`), in that order. Asked at most once per batch, and
   * before the batch two past this one is taken (the engine holds the rows of three batches).
   */
  rows(positions: readonly number[]): Promise<GraphRow[]>;
}

/** What `subgraph` reads: a run's limits, and the most nodes and edges together the answer holds. */
export type SubgraphOptions = Omit<RunOptions, 'properties' | 'signal'> & { maxItems: number };

/**
 * The distinct nodes and edges of a query's rows, as the JSON of the arrays the API answers (run/query), in UTF-8
 * bytes: what the route writes to the socket as it is. Bytes, not strings: a string from the Kùzu process is decoded
 * from the IPC message, then measured and encoded again for the socket, which cost the service more than the query's
 * own reading (bench/README.md, "Graph").
 */
export interface SubgraphAnswer {
  /** UTF-8 JSON of GraphNode[]. */
  nodes: Buffer;
  /** UTF-8 JSON of GraphEdge[]. */
  edges: Buffer;
  /** Rows were left unread (maxRows), or the items of rows past maxItems left out. */
  truncated: boolean;
}

export interface GraphSource {
  readonly vendor: GraphVendor;
  /**
   * For an engine that must be started before it answers (the embedded graph: its Kùzu process, which locks the
   * graph's folder): starts it now, failing when it cannot, rather than at the first call.
   */
  open?(): Promise<void>;
  /** Starts a query; rejects with a GraphError when it cannot start (syntax, write refused, unreachable). */
  run(query: string, options: RunOptions): Promise<RowStream>;
  /**
   * Runs a query for its nodes and edges only, each once (the rows of `run` through a Subgraph): read up to
   * `maxRows` rows, rows added whole until the items reach `maxItems` (the rest are still read: a write's stream is
   * not cut). An engine may make it where it reads the rows, converting each item once and handing over its JSON.
   */
  subgraph(query: string, options: SubgraphOptions): Promise<SubgraphAnswer>;
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

/** `subgraph` made of `run`'s rows, for an engine that hands over rows only. */
export async function subgraphOfRows(stream: RowStream, maxItems: number): Promise<SubgraphAnswer> {
  const subgraph = new Subgraph();
  let cut = false;
  for await (const row of stream) {
    if (cut) continue;
    subgraph.addRow(row);
    if (subgraph.size >= maxItems) cut = true;
  }
  await stream.close();
  const { nodes, edges } = subgraph.toJSON();
  return { nodes: Buffer.from(JSON.stringify(nodes)), edges: Buffer.from(JSON.stringify(edges)), truncated: cut || stream.truncated };
}

/** Reads every row of a stream (for small answers: a node lookup, a test). */
export async function allRows(stream: RowStream): Promise<GraphRow[]> {
  const rows: GraphRow[] = [];
  for await (const row of stream) rows.push(row);
  return rows;
}
