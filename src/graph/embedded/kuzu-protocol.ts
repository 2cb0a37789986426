/**
 * Messages between the service and the embedded graph's child process (kuzu-process.ts). Values cross the process
 * boundary as "wire values": graph items tagged (`$node`, `$edge`, `$path`), property maps tagged (`$map`), so a
 * user's map can never pass for a node; decodeWireValue turns them back into the classes of ../items.ts.
 */
import { EdgeValue, NodeValue, PathValue, type GraphEdge, type GraphNode, type GraphPath, type GraphValue, type PropertyValue } from '../items.js';

export type WireValue =
  | string
  | number
  | boolean
  | null
  | WireValue[]
  | { $node: GraphNode }
  | { $edge: GraphEdge }
  | { $path: GraphPath }
  | { $map: Record<string, WireValue> };

export type WireRow = Record<string, WireValue>;

export type ParentMessage =
  | { t: 'run'; id: number; query: string; params: Record<string, unknown>; readOnly: boolean; timeoutMs: number; maxRows: number; batchRows: number }
  | { t: 'next'; id: number }
  | { t: 'cancel'; id: number }
  | { t: 'node'; id: number; nodeId: string }
  | { t: 'edge'; id: number; edgeId: string }
  /** Statements run in one transaction: all take effect or none (the bulk loader). */
  | { t: 'load'; id: number; statements: string[]; timeoutMs: number };

export type ErrorKind = 'bad_graph_request' | 'graph_request_timeout' | 'write_forbidden' | 'data_source_unavailable';

export type ChildMessage =
  | { t: 'opened' }
  | { t: 'openFailed'; message: string; locked: boolean }
  | { t: 'started'; id: number; columns: string[] }
  | { t: 'rows'; id: number; rows: WireRow[]; done: boolean; truncated: boolean }
  | { t: 'item'; id: number; item: GraphNode | GraphEdge | null }
  | { t: 'loaded'; id: number; results: string[] }
  | { t: 'failed'; id: number; kind: ErrorKind; message: string };

export function decodeWireValue(value: WireValue): GraphValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodeWireValue);
  if ('$node' in value) return new NodeValue(value.$node);
  if ('$edge' in value) return new EdgeValue(value.$edge);
  if ('$path' in value) return new PathValue(value.$path);
  return Object.fromEntries(Object.entries(value.$map).map(([k, v]) => [k, decodeWireValue(v) as PropertyValue]));
}

export function decodeWireRow(row: WireRow): Record<string, GraphValue> {
  const decoded: Record<string, GraphValue> = {};
  for (const [column, value] of Object.entries(row)) decoded[column] = decodeWireValue(value);
  return decoded;
}
