/**
 * Graph items in the shapes of Linkurious Enterprise's API (`LkNode`, `LkEdge` of @linkurious/rest-client), which
 * every graph adapter produces, so that a query's answer, an alert's match and a case's target look the same
 * whatever engine holds the graph. IDs are strings, stable across runs and restarts (see docs/graph.md).
 */

/** A property value as the API answers it: JSON scalars, lists and maps (dates as ISO strings). */
export type PropertyValue = string | number | boolean | null | PropertyValue[] | { [key: string]: PropertyValue };

export interface GraphNode {
  id: string;
  data: { categories: string[]; properties: Record<string, PropertyValue>; readAt: number; isVirtual: false; geo: Record<string, never> };
}

/**
 * An edge. `source` and `target` are in `data` (this service's contract) and beside it (where
 * @linkurious/rest-client's `LkEdge` reads them): the same node ids in both places.
 */
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  data: { type: string; source: string; target: string; properties: Record<string, PropertyValue>; readAt: number; isVirtual: false };
}

/** A path: its nodes and edges, in order. */
export interface GraphPath {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/**
 * One value of a result row, after an adapter mapped it: a node, an edge, a path, a list of values, or a plain
 * value. The tagged forms never collide with a property map, whose keys are the user's, because they are
 * objects of their own class.
 */
export type GraphValue = NodeValue | EdgeValue | PathValue | GraphValue[] | PropertyValue;

export class NodeValue {
  constructor(readonly node: GraphNode) {}
}
export class EdgeValue {
  constructor(readonly edge: GraphEdge) {}
}
export class PathValue {
  constructor(readonly path: GraphPath) {}
}

/** A result row: column name → value, in the query's column order. Made with byNames: a column may be `__proto__`. */
export type GraphRow = Record<string, GraphValue>;

/**
 * An empty object without a prototype, for keys that are the query's or the data's own names (columns, properties,
 * map keys): on a plain `{}`, `row["__proto__"] = value` sets the object's prototype (or does nothing) instead of
 * adding the key, and `row["constructor"]` reads Object's.
 */
export function byNames<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function graphNode(id: string, categories: string[], properties: Record<string, PropertyValue>, readAt: number): GraphNode {
  return { id, data: { categories, properties, readAt, isVirtual: false, geo: {} } };
}

export function graphEdge(id: string, type: string, source: string, target: string, properties: Record<string, PropertyValue>, readAt: number): GraphEdge {
  return { id, source, target, data: { type, source, target, properties, readAt, isVirtual: false } };
}

/** Nodes and edges, each once, in the order first met. */
export class Subgraph {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges = new Map<string, GraphEdge>();

  /** Adds every node and edge found in `value`, through paths and lists. */
  add(value: GraphValue): void {
    if (value instanceof NodeValue) {
      if (!this.nodes.has(value.node.id)) this.nodes.set(value.node.id, value.node);
    } else if (value instanceof EdgeValue) {
      if (!this.edges.has(value.edge.id)) this.edges.set(value.edge.id, value.edge);
    } else if (value instanceof PathValue) {
      for (const node of value.path.nodes) this.add(new NodeValue(node));
      for (const edge of value.path.edges) this.add(new EdgeValue(edge));
    } else if (Array.isArray(value)) {
      for (const item of value) this.add(item);
    }
  }

  addRow(row: GraphRow): void {
    for (const value of Object.values(row)) this.add(value);
  }

  get size(): number {
    return this.nodes.size + this.edges.size;
  }

  toJSON(): { nodes: GraphNode[]; edges: GraphEdge[] } {
    return { nodes: [...this.nodes.values()], edges: [...this.edges.values()] };
  }
}

/** Whether `value` is, or holds, a node, an edge or a path (a column that can name a case's target). */
export function holdsGraphItems(value: GraphValue): boolean {
  if (value instanceof NodeValue || value instanceof EdgeValue || value instanceof PathValue) return true;
  return Array.isArray(value) && value.some(holdsGraphItems);
}

/** A plain value for a column: graph items become their ids (a list of them, a list of ids). */
export function plainValue(value: GraphValue): PropertyValue {
  if (value instanceof NodeValue) return value.node.id;
  if (value instanceof EdgeValue) return value.edge.id;
  if (value instanceof PathValue) return [...value.path.nodes.map((n) => n.id), ...value.path.edges.map((e) => e.id)];
  if (Array.isArray(value)) return value.map(plainValue);
  return value;
}
