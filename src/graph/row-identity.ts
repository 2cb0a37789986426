/**
 * A decoded row's identity: the nodes and edges it holds (items.ts, eachItem), as a match target and as a match key
 * (match-identity.ts), and a stream's rows in identified batches made of them, for an engine that hands over rows
 * only (a Bolt graph, rows read ahead). The embedded graph makes the same keys where it reads its rows, from the ids
 * its Kùzu process sends (embedded/row-refs.ts); test/graph/match-identity.test.ts holds the two to one answer.
 */
import type { IdentifiedBatch } from './graph-source.js';
import { itemIdsOf, type GraphRow, type GraphValue } from './items.js';
import { matchKey, targetOf, type Target } from './match-identity.js';

/** The target of the nodes and edges of `values` (through paths and lists): sorted, each once. */
export function targetOfValues(values: readonly GraphValue[]): Target {
  return targetOf(itemIdsOf(values));
}

/** A row's match key (match-identity.ts), as the embedded graph makes it from the refs its Kùzu process sends. */
export function keyOfRow(row: GraphRow): string {
  const { nodes, edges } = itemIdsOf(Object.values(row));
  return matchKey(nodes, edges);
}

/** Rows held in memory as an identified batch: their keys made here, any of them handed back as they are. */
function batchOfRows(held: readonly GraphRow[]): IdentifiedBatch {
  return { keys: held.map(keyOfRow), rows: async (positions) => positions.map((i) => held[i]!) };
}

/**
 * `rows` (a stream's, as they are read) in identified batches of up to `batchRows`: RowStream.identified for an
 * engine that does not make them itself. What was read before a failure (a time-out, the graph going away) is still
 * handed over, then the failure.
 */
export async function* identifiedRows(rows: AsyncIterable<GraphRow>, batchRows: number): AsyncIterable<IdentifiedBatch> {
  let held: GraphRow[] = [];
  let failure: { err: unknown } | undefined;
  try {
    for await (const row of rows) {
      held.push(row);
      if (held.length >= batchRows) {
        yield batchOfRows(held);
        held = [];
      }
    }
  } catch (err) {
    failure = { err };
  }
  if (held.length > 0) yield batchOfRows(held);
  if (failure) throw failure.err;
}
