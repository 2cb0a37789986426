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
  return hash('sha256', JSON.stringify([target.nodes, target.edges]), 'hex');
}
