/**
 * A result row's match identity as one text, made the same way wherever the row is read: in the service from a
 * decoded row (alert-rows.ts), and in the embedded graph's Kùzu process from the row's wire form (kuzu-process.ts),
 * which then ships only the identities of a batch and, later, the rows of the matches no run recorded before. Both
 * collect the ids of the row's nodes and edges (through paths and lists; not inside maps, whose values name no
 * match) and end here, so the two can never disagree on what was recorded.
 *
 * Pure: no database, no engine; the child process imports it as it is.
 */
import type { WireRow, WireValue } from '../graph/embedded/kuzu-protocol.js';
import { hashTarget, MAX_TARGET_IDS, targetOf } from './target.js';

/** The identity of a row holding no node or edge: not a match. */
export const NO_MATCH = '';
/** The identity of a row holding more than MAX_TARGET_IDS nodes and edges: not recorded (match_too_large). */
export const TOO_LARGE = '-';

/** The match identity of the nodes and edges `nodes` and `edges` (any order, repeats allowed): hashTarget of its target. */
export function matchIdentity(nodes: string[], edges: string[]): string {
  const target = targetOf({ nodes, edges });
  const size = target.nodes.length + target.edges.length;
  if (size === 0) return NO_MATCH;
  if (size > MAX_TARGET_IDS) return TOO_LARGE;
  return hashTarget(target);
}

/** Adds the ids of every node and edge in a wire value (through paths and lists) to `nodes` and `edges`. */
function collectWireIds(value: WireValue, nodes: string[], edges: string[]): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectWireIds(item, nodes, edges);
    return;
  }
  if ('n' in value) nodes.push(value.n[0]);
  else if ('e' in value) edges.push(value.e[0]);
  else if ('p' in value) {
    for (const node of value.p[0]) nodes.push(node[0]);
    for (const edge of value.p[1]) edges.push(edge[0]);
  }
}

/** The match identity of a wire row (all its columns). */
export function wireRowIdentity(row: WireRow): string {
  const nodes: string[] = [];
  const edges: string[] = [];
  for (const value of row) collectWireIds(value, nodes, edges);
  return matchIdentity(nodes, edges);
}
