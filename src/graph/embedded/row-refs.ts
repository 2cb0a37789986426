/**
 * A batch of an alert run's rows by the ids of their nodes and edges, in numbers: what the Kùzu process sends of a
 * batch first (kuzu-catalogue.ts writes it from Kùzu's own values), and what the service makes the rows' match keys
 * of (matchKeysOf), before it picks the rows of the matches no run recorded before.
 *
 * Why numbers: the process's thread is what an alert rerun waits for, and making every row's ids as text there (its
 * nodes' `<label>:<key>`, its edges' `<type>:<source>-><target>`) and its key added a quarter or more to the bare
 * query's time (bench/README.md, "Alerts"). Here the process only notes each node's label and primary key once,
 * and names it by its index among them; the texts are made by the service, whose thread is idle meanwhile, with the
 * same functions (kuzu-ids.ts, match-identity.ts).
 */
import { matchKey } from '../match-identity.js';
import { edgeIdByEnds, edgeIdByProperty, nodeId } from './kuzu-ids.js';

export interface RowRefs {
  /**
   * Per row: the count n of its nodes and e of its edges (met through lists and paths, not inside maps; repeats
   * allowed), then its n nodes, then its e edges as 4 numbers each: the type (an index into `names`), the value of
   * its `id` property (an index into `edgeIds`, or -1: the edge is named by its ends), its source and its target.
   * A node is named by its index in the batch's nodes (`labels` and `keys`): small integers, which the message
   * carries in a byte or two each, where Kùzu's internal ids took eight.
   */
  rows: number[];
  /** Each node's label (an index into `names`), or -1 when its id is made already: then `keys` holds it. */
  labels: number[];
  /** Each node's primary key value (or its id made already). */
  keys: unknown[];
  names: string[];
  edgeIds: unknown[];
}

/** A batch's refs as the Kùzu process keeps them, to make its picked rows: each node's internal id too. */
export interface BatchRefs extends RowRefs {
  /** Each node's ref: Kùzu's internal id as one number (internalRef). */
  nodes: number[];
}

/**
 * Kùzu's internal id of an item as one number, a node's ref: a text made for each (an alert run reads 180,000 of
 * them) was a tenth of an unchanged rerun's work in the Kùzu process. Exact while a table's offsets stay under 2^40
 * and its number under 2^12.
 */
export function internalRef(id: { table: number; offset: number }): number {
  return id.table * 2 ** 40 + id.offset;
}

/** The stable id of each node of `refs`, by its index: made as the Kùzu process would make it (kuzu-ids.ts). */
export function nodeIdsOf(refs: RowRefs): string[] {
  const { labels, keys, names } = refs;
  const ids = new Array<string>(labels.length);
  for (let i = 0; i < labels.length; i++) ids[i] = labels[i]! < 0 ? String(keys[i]) : nodeId(names[labels[i]!]!, keys[i]);
  return ids;
}

/** The stable id of each node of `refs`, by its ref (for its rows' wire form). */
export function nodeIdsByRef(refs: BatchRefs): Map<number, string> {
  const ids = nodeIdsOf(refs);
  return new Map(refs.nodes.map((ref, i) => [ref, ids[i]!]));
}

/** The match key (match-identity.ts) of each row of `refs`, in order. */
export function matchKeysOf(refs: RowRefs): string[] {
  const ids = nodeIdsOf(refs);
  const { rows, names, edgeIds } = refs;
  const keys: string[] = [];
  let at = 0;
  while (at < rows.length) {
    const nodeCount = rows[at++]!;
    const edgeCount = rows[at++]!;
    const nodes: string[] = new Array<string>(nodeCount);
    for (let n = 0; n < nodeCount; n++) nodes[n] = ids[rows[at++]!]!;
    const edges: string[] = new Array<string>(edgeCount);
    for (let e = 0; e < edgeCount; e++, at += 4) {
      const type = names[rows[at]!]!;
      const idValue = rows[at + 1]!;
      edges[e] = idValue >= 0 ? edgeIdByProperty(type, edgeIds[idValue]) : edgeIdByEnds(type, ids[rows[at + 2]!]!, ids[rows[at + 3]!]!);
    }
    // Ids made by kuzu-ids.ts are URI-encoded (or `?table:offset`): plain for JSON.
    keys.push(matchKey(nodes, edges, true));
  }
  return keys;
}
