/**
 * A result row's match identity as one text, made the same way wherever the row is read: in the service from a
 * decoded row (row-identity.ts), and, for the embedded graph, from the ids of a row's nodes and edges that its
 * Kùzu process sends first, in numbers (embedded/row-refs.ts), before the rows of the matches no run recorded
 * before. Both collect the ids of the row's nodes and edges (through paths and lists; not inside maps, whose values
 * name no match) and end here, so the two can never disagree on what was recorded
 * (test/graph/match-identity.test.ts, and the embedded graph's test on Kùzu's rows).
 *
 * Here, beside the graph, with the target hash it ends in: the alerts import both from here.
 * Pure: no database, no engine.
 */
import { hash } from 'node:crypto';

/** The most nodes and edges one match (or a case's target) may hold. */
export const MAX_TARGET_IDS = 10_000;

/** What a match found: graph node and edge IDs, as reported. */
export interface Match {
  nodes?: string[];
  edges?: string[];
}

/** A case's target: sorted, de-duplicated node IDs and edge IDs. */
export interface Target {
  nodes: string[];
  edges: string[];
}

// Sorted by UTF-16 code units (JavaScript's default order): the same target always gives the same hash,
// whatever order the runner reported its IDs in, and whichever process computes it.
function canonical(ids: readonly string[] = []): string[] {
  // An alert run makes two targets of every row it reads, most of one or two ids: those without a Set and a sort.
  if (ids.length < 2) return [...ids];
  if (ids.length === 2) {
    const [a, b] = ids as [string, string];
    return a === b ? [a] : a < b ? [a, b] : [b, a];
  }
  return [...new Set(ids)].sort();
}

export function targetOf(match: Match): Target {
  return { nodes: canonical(match.nodes), edges: canonical(match.edges) };
}

/** Within one alert a case is identified by its target: this is that identity. */
export function hashTarget(target: Target): string {
  // The one-shot hash: a quarter of createHash's cost per call, which an alert run pays for every row it reads.
  return hash('sha256', targetText(target), 'hex');
}

/** What hashTarget hashes. */
function targetText(target: Target): string {
  return JSON.stringify([target.nodes, target.edges]);
}

/**
 * targetText of ids that JSON needs no escape for (the embedded graph's, URI-encoded: no quote, backslash or control
 * character): the same text, joined rather than stringified, which is cheaper. Joined once, from its pieces: a
 * template of joins is a rope of strings, copied into one the first time it is hashed or compared, which made
 * looking keys up in a set (alerts/recorded-matches.ts) slower (bench/README.md, "Alerts").
 */
function plainTargetText({ nodes, edges }: Target): string {
  const parts = ['[['];
  for (let i = 0; i < nodes.length; i++) parts.push(i === 0 ? '"' : '","', nodes[i]!);
  parts.push(nodes.length === 0 ? '],[' : '"],[');
  for (let i = 0; i < edges.length; i++) parts.push(i === 0 ? '"' : '","', edges[i]!);
  parts.push(edges.length === 0 ? ']]' : '"]]');
  return parts.join('');
}

/** The identity of a row holding no node or edge: not a match. */
export const NO_MATCH = '';
/** The identity of a row holding more than MAX_TARGET_IDS nodes and edges: not recorded (match_too_large). */
export const TOO_LARGE = '-';

/**
 * The match key of the nodes and edges `nodes` and `edges` (any order, repeats allowed): its target's canonical
 * text (what hashTarget hashes), or NO_MATCH, or TOO_LARGE. `plainIds`: every id is known to need no escape in JSON
 * (plainTargetText).
 */
export function matchKey(nodes: string[], edges: string[], plainIds = false): string {
  const target = targetOf({ nodes, edges });
  const size = target.nodes.length + target.edges.length;
  if (size === 0) return NO_MATCH;
  if (size > MAX_TARGET_IDS) return TOO_LARGE;
  return plainIds ? plainTargetText(target) : targetText(target);
}

/** The match identity a match key stands for: hashTarget of its target, or NO_MATCH, or TOO_LARGE as they are. */
export function identityOfKey(key: string): string {
  // hashTarget's hash, of the text it would have made.
  return key === NO_MATCH || key === TOO_LARGE ? key : hash('sha256', key, 'hex');
}
