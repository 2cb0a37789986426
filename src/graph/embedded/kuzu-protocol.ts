/**
 * Messages between the service and the embedded graph's child process (kuzu-process.ts).
 *
 * A batch of rows crosses the process boundary as one JSON string: each row an array of its values in the order of
 * the query's columns, each value a "wire value". Measured on 60,000 rows of a node, an edge and a node (two runs on
 * a busy machine): the LKE shapes as objects through the IPC channel's structured clone took 2.0–2.8 s to encode
 * and decode; these compact forms as JSON text 0.6–0.9 s, and 0.3–0.45 s without properties (what an alert run
 * reads). A wire value is JSON: scalars as they are, lists as arrays, and four tagged one-key objects, so a user's
 * map can never pass for a node:
 *
 *   {"n": [id, label, properties?]}                 a node
 *   {"e": [id, type, source, target, properties?]}  an edge (source and target: the ends' ids)
 *   {"p": [nodes, edges]}                           a path: its nodes and edges in the two forms above, unwrapped
 *   {"m": {key: wire value}}                        a map
 *
 * Properties are plain JSON values; a run that asked for no properties gets none (undefined). Numbers that JSON
 * cannot hold (NaN, ±Infinity) arrive as null, as the API's JSON answers would have them anyway.
 * decodeWireValue turns wire values back into the classes of ../items.ts.
 */
import type { GraphEdge, GraphNode, PropertyValue } from '../graph-schemas.js';
import { byNames, EdgeValue, graphEdge, graphNode, NodeValue, PathValue, type GraphRow, type GraphValue } from '../items.js';
import type { RowRefs } from './row-refs.js';

export type WireProperties = Record<string, PropertyValue>;
export type WireNode = [id: string, label: string, properties?: WireProperties];
export type WireEdge = [id: string, type: string, source: string, target: string, properties?: WireProperties];

export type WireValue =
  | string
  | number
  | boolean
  | null
  | WireValue[]
  | { n: WireNode }
  | { e: WireEdge }
  | { p: [WireNode[], WireEdge[]] }
  | { m: Record<string, WireValue> };

/** A row: its values in the order of the query's columns. */
export type WireRow = WireValue[];

export type ParentMessage =
  | {
      t: 'run';
      id: number;
      query: string;
      params: Record<string, unknown>;
      readOnly: boolean;
      timeoutMs: number;
      maxRows: number;
      batchRows: number;
      /** False: nodes and edges without their properties. */
      properties: boolean;
      /** The most of Kùzu's worker threads the query may use (RunOptions.threads): all of them when absent. */
      threads?: number;
    }
  /** A run for its distinct nodes and edges (GraphSource.subgraph), answered in one message. */
  | { t: 'subgraph'; id: number; query: string; params: Record<string, unknown>; readOnly: boolean; timeoutMs: number; maxRows: number; maxItems: number; threads?: number }
  | { t: 'next'; id: number }
  /**
   * The next `rows` rows of a run, answered by the ids of their nodes and edges only (row-refs.ts); the process keeps
   * the batch's rows for a `pick` of the rows the service wants, until four more batches were identified. Asked
   * past the run's last batch, answered with an empty one (done).
   */
  | { t: 'identify'; id: number; rows: number }
  /** The wire rows at `positions` (ascending) of identified batch `batch`, answered as `rows`; the batch is then dropped. */
  | { t: 'pick'; id: number; batch: number; positions: number[] }
  /** Identified batch `batch` is not picked from: dropped at once (no answer). */
  | { t: 'release'; id: number; batch: number }
  | { t: 'cancel'; id: number }
  | { t: 'node'; id: number; nodeId: string }
  | { t: 'edge'; id: number; edgeId: string }
  /** Statements run in one transaction: all take effect or none (the bulk loader). */
  | { t: 'load'; id: number; statements: string[]; timeoutMs: number }
  /**
   * Tests only, honoured by a process started with its test hook open (EmbeddedGraphOptions.testHooks): reads
   * `path` and writes a file in `dir` from inside the process, to show what its confinement lets through.
   */
  | { t: 'fileAccess'; id: number; path: string; dir: string };

export type ErrorKind = 'bad_graph_request' | 'graph_request_timeout' | 'write_forbidden' | 'data_source_unavailable';

export type ChildMessage =
  | { t: 'opened' }
  | { t: 'openFailed'; message: string; locked: boolean }
  /** `readAt`: when the run started, every item's `readAt`. */
  | { t: 'started'; id: number; columns: string[]; readAt: number }
  /** `rows`: the JSON text of a WireRow[]. */
  | { t: 'rows'; id: number; rows: string; done: boolean; truncated: boolean }
  /** `refs`: the batch's `count` rows by the ids of their nodes and edges, in numbers (row-refs.ts). */
  | { t: 'identities'; id: number; batch: number; count: number; refs: RowRefs; done: boolean; truncated: boolean }
  /**
   * `nodes`, `edges`: the UTF-8 JSON of GraphNode[] and GraphEdge[], as the API answers them (SubgraphAnswer). It
   * comes on the answer pipe (answer-pipe.ts), not the IPC channel; its failure comes on the IPC channel.
   */
  | { t: 'subgraph'; id: number; nodes: Buffer; edges: Buffer; truncated: boolean }
  | { t: 'item'; id: number; item: WireValue; readAt: number }
  | { t: 'loaded'; id: number; results: string[] }
  /** `read`, `write`: 'ok' or the error's code (EACCES…); `env`: the names of the process's environment variables. */
  | { t: 'fileAccess'; id: number; read: string; write: string; env: string[] }
  | { t: 'failed'; id: number; kind: ErrorKind; message: string };

export function decodeWireNode([id, label, properties]: WireNode, readAt: number): GraphNode {
  return graphNode(id, [label], properties ?? {}, readAt);
}

export function decodeWireEdge([id, type, source, target, properties]: WireEdge, readAt: number): GraphEdge {
  return graphEdge(id, type, source, target, properties ?? {}, readAt);
}

export function decodeWireValue(value: WireValue, readAt: number): GraphValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => decodeWireValue(item, readAt));
  if ('n' in value) return new NodeValue(decodeWireNode(value.n, readAt));
  if ('e' in value) return new EdgeValue(decodeWireEdge(value.e, readAt));
  if ('p' in value) return new PathValue({ nodes: value.p[0].map((n) => decodeWireNode(n, readAt)), edges: value.p[1].map((e) => decodeWireEdge(e, readAt)) });
  const map = byNames<PropertyValue>();
  for (const [key, item] of Object.entries(value.m)) map[key] = decodeWireValue(item, readAt) as PropertyValue;
  return map;
}

export function decodeWireRow(row: WireRow, columns: readonly string[], readAt: number): GraphRow {
  const decoded: GraphRow = byNames();
  for (let i = 0; i < columns.length; i++) decoded[columns[i]!] = decodeWireValue(row[i]!, readAt);
  return decoded;
}
