/**
 * A case's target as the graph has it now (LKE's populated case): each node and edge fetched by id. The case page
 * draws it; when the graph cannot answer, the case still has its ids, and `graphProblem` says why.
 */
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { GraphEdge, GraphNode } from '../graph/items.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import type { Case } from './cases.js';

// A case drawn in the browser: more items than this are not fetched (the ids are all in the case).
export const MAX_POPULATED_ITEMS = 500;

export async function populateCase(
  db: Database,
  graphs: GraphRegistry,
  sourceKey: string,
  kase: Pick<Case, 'nodes' | 'edges'>,
): Promise<{ graph?: { nodes: GraphNode[]; edges: GraphEdge[] }; graphProblem?: { key: string; message: string } }> {
  try {
    const opened = await graphs.open(db, sourceKey);
    if (!opened) return {};
    const nodes = (await Promise.all(kase.nodes.slice(0, MAX_POPULATED_ITEMS).map((id) => opened.graph.node(id)))).filter((n): n is GraphNode => n !== undefined);
    const room = Math.max(0, MAX_POPULATED_ITEMS - kase.nodes.length);
    const edges = (await Promise.all(kase.edges.slice(0, room).map((id) => opened.graph.edge(id)))).filter((e): e is GraphEdge => e !== undefined);
    return { graph: { nodes, edges } };
  } catch (err) {
    if (err instanceof AppError) return { graphProblem: { key: err.key, message: err.message } };
    return { graphProblem: { key: 'data_source_unavailable', message: err instanceof Error ? err.message : String(err) } };
  }
}
