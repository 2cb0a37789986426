/**
 * The graph's API shapes, declared once: the engines a data source's graph may be held by, and its items in the
 * shapes of Linkurious Enterprise's API (`LkNode`, `LkEdge` of @linkurious/rest-client), which every graph adapter
 * produces, so that a query's answer, an alert's match and a case's target look the same whatever engine holds the
 * graph. IDs are strings, stable across runs and restarts (see docs/graph.md). Types derived with Static; no Node
 * import here (sources/schemas.ts builds on these, and the console reads their types).
 */
import { Type, type Static } from 'typebox';

/** The engines a graph may be held by: Kùzu under DATA_DIR (`embedded`), Neo4j or Memgraph over Bolt (`neo4j`). */
export const GRAPH_VENDORS = ['embedded', 'neo4j'] as const;
export type GraphVendor = (typeof GRAPH_VENDORS)[number];

/** A property value as the API answers it: JSON scalars, lists and maps (dates as ISO strings). */
export type PropertyValue = string | number | boolean | null | PropertyValue[] | { [key: string]: PropertyValue };

// The document says what LKE's clients read (any JSON value, a boolean, an empty object); the types say what the
// adapters make (Type.Unsafe: the same schema, a narrower type).
const GraphItemData = {
  properties: Type.Unsafe<Record<string, PropertyValue>>(Type.Record(Type.String(), Type.Unknown())),
  readAt: Type.Number(),
  isVirtual: Type.Unsafe<false>(Type.Boolean()),
};

export const GraphNodeSchema = Type.Object(
  {
    id: Type.String(),
    data: Type.Object({ categories: Type.Array(Type.String()), ...GraphItemData, geo: Type.Unsafe<Record<string, never>>(Type.Object({})) }),
  },
  { $id: 'GraphNode', description: 'A node, as LkNode' },
);

/**
 * An edge. `source` and `target` are in `data` (this service's contract) and beside it (where
 * @linkurious/rest-client's `LkEdge` reads them): the same node ids in both places.
 */
export const GraphEdgeSchema = Type.Object(
  {
    id: Type.String(),
    source: Type.String(),
    target: Type.String(),
    data: Type.Object({ type: Type.String(), source: Type.String(), target: Type.String(), ...GraphItemData }),
  },
  { $id: 'GraphEdge', description: 'An edge, as LkEdge (source and target also in data)' },
);

export type GraphNode = Static<typeof GraphNodeSchema>;
export type GraphEdge = Static<typeof GraphEdgeSchema>;
