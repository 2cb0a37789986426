import { createHash } from 'node:crypto';

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
  return [...new Set(ids)].sort();
}

export function targetOf(match: Match): Target {
  return { nodes: canonical(match.nodes), edges: canonical(match.edges) };
}

/** Within one alert a case is identified by its target: this is that identity. */
export function hashTarget(target: Target): string {
  return createHash('sha256').update(JSON.stringify([target.nodes, target.edges])).digest('hex');
}
