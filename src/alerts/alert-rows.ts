/**
 * A result row of an alert's query as a match: its identity is every node and edge in it (through paths and
 * lists); its case key the `target` variable's nodes and edges, or the whole match; its columns the scalar values
 * the alert picks, typed as the alert says.
 */
import type { IdentifiedBatch, RowStream } from '../graph/graph-source.js';
import { byNames, EdgeValue, holdsGraphItems, NodeValue, PathValue, plainValue, type GraphRow, type GraphValue, type PropertyValue } from '../graph/items.js';
import type { AlertColumn } from './alerts.js';
import type { FoundMatch } from './record-matches.js';
import { matchKey } from '../graph/match-identity.js';
import { targetOf, type Target } from './target.js';

/** Adds the ids of every node and edge in `value` (through paths and lists) to `nodes` and `edges`. */
function collectIds(value: GraphValue, nodes: string[], edges: string[]): void {
  if (value instanceof NodeValue) nodes.push(value.node.id);
  else if (value instanceof EdgeValue) edges.push(value.edge.id);
  else if (value instanceof PathValue) {
    for (const node of value.path.nodes) nodes.push(node.id);
    for (const edge of value.path.edges) edges.push(edge.id);
  } else if (Array.isArray(value)) for (const item of value) collectIds(item, nodes, edges);
}

function itemsOf(values: GraphValue[]): Target {
  const nodes: string[] = [];
  const edges: string[] = [];
  for (const value of values) collectIds(value, nodes, edges);
  return targetOf({ nodes, edges });
}

export function columnValues(row: GraphRow, columns: readonly AlertColumn[]): Record<string, PropertyValue> {
  // By the alert's column names, which may be any returned name (`__proto__` too).
  const values = byNames<PropertyValue>();
  for (const column of columns) {
    const value = row[column.columnName] === undefined ? null : plainValue(row[column.columnName]!);
    if (value === null) values[column.columnName] = null;
    else if (column.type === 'number') values[column.columnName] = typeof value === 'number' ? value : Number.isFinite(Number(value)) ? Number(value) : null;
    else values[column.columnName] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return values;
}

/** The match a row is, or undefined when the row holds no node or edge (it names nothing a case could be about). */
export function matchOfRow(row: GraphRow, target: string | null, columns: readonly AlertColumn[]): FoundMatch | undefined {
  const identity = itemsOf(Object.values(row));
  if (identity.nodes.length + identity.edges.length === 0) return undefined;
  const targetValue = target === null ? undefined : row[target];
  const caseKey = targetValue !== undefined && holdsGraphItems(targetValue) ? itemsOf([targetValue]) : identity;
  return { identity, caseKey, columns: columnValues(row, columns) };
}

/** A row's match key (match-identity.ts), as the embedded graph makes it from the refs its Kùzu process sends. */
export function keyOfRow(row: GraphRow): string {
  const nodes: string[] = [];
  const edges: string[] = [];
  for (const value of Object.values(row)) collectIds(value, nodes, edges);
  return matchKey(nodes, edges);
}

/**
 * A stream's rows in identified batches: the engine's own when it makes them (the embedded graph ships only the
 * rows asked for), else made here of the rows read (a Bolt graph), so an alert run reads every graph one way.
 */
export async function* identifiedBatches(stream: RowStream, batchRows: number): AsyncIterable<IdentifiedBatch> {
  if (stream.identified) {
    yield* stream.identified(batchRows);
    return;
  }
  let rows: GraphRow[] = [];
  const batchOf = (held: GraphRow[]): IdentifiedBatch => ({ keys: held.map(keyOfRow), rows: async (positions) => positions.map((i) => held[i]!) });
  let failure: { err: unknown } | undefined;
  try {
    for await (const row of stream) {
      rows.push(row);
      if (rows.length >= batchRows) {
        yield batchOf(rows);
        rows = [];
      }
    }
  } catch (err) {
    // What was read before a time-out (or the graph going away) is still handed over, then the failure.
    failure = { err };
  }
  if (rows.length > 0) yield batchOf(rows);
  if (failure) throw failure.err;
}
