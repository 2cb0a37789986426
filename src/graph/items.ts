/**
 * The values of a query's result rows, as every graph adapter maps them: the graph's items (graph-schemas.ts), the
 * paths and lists that hold them, and plain values; and the one walk over them that finds the items a value holds.
 */
import type { GraphEdge, GraphNode, PropertyValue } from './graph-schemas.js';

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

/** What eachItem hands each node and edge it meets to. */
export interface ItemVisitor {
  node(node: GraphNode): void;
  edge(edge: GraphEdge): void;
}

/**
 * Hands every node and edge of `value` to `visitor`, in order, through paths (their nodes, then their edges) and
 * lists; not inside maps, whose values are the data's and name no match, no case target and no answer's item. The
 * one walk over a row's values: a subgraph's items, a match's identity (row-identity.ts), a column's ids.
 */
export function eachItem(value: GraphValue, visitor: ItemVisitor): void {
  if (value instanceof NodeValue) visitor.node(value.node);
  else if (value instanceof EdgeValue) visitor.edge(value.edge);
  else if (value instanceof PathValue) {
    for (const node of value.path.nodes) visitor.node(node);
    for (const edge of value.path.edges) visitor.edge(edge);
  } else if (Array.isArray(value)) for (const item of value) eachItem(item, visitor);
}

/** Nodes and edges, each once, in the order first met. */
export class Subgraph implements ItemVisitor {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges = new Map<string, GraphEdge>();

  node(node: GraphNode): void {
    if (!this.nodes.has(node.id)) this.nodes.set(node.id, node);
  }

  edge(edge: GraphEdge): void {
    if (!this.edges.has(edge.id)) this.edges.set(edge.id, edge);
  }

  /** Adds every node and edge found in `value`, through paths and lists. */
  add(value: GraphValue): void {
    eachItem(value, this);
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

/** The ids of the nodes and edges of `values`, each list in the order met, repeats kept (eachItem). */
export function itemIdsOf(values: readonly GraphValue[]): { nodes: string[]; edges: string[] } {
  const nodes: string[] = [];
  const edges: string[] = [];
  const visitor: ItemVisitor = { node: (node) => nodes.push(node.id), edge: (edge) => edges.push(edge.id) };
  for (const value of values) eachItem(value, visitor);
  return { nodes, edges };
}

/** Whether `value` is, or holds, a node, an edge or a path (a column that can name a case's target). */
export function holdsGraphItems(value: GraphValue): boolean {
  const { nodes, edges } = itemIdsOf([value]);
  return nodes.length + edges.length > 0;
}

/** A plain value for a column: graph items become their ids (a list of them, a list of ids; a path, its nodes' then its edges'). */
export function plainValue(value: GraphValue): PropertyValue {
  if (value instanceof NodeValue) return value.node.id;
  if (value instanceof EdgeValue) return value.edge.id;
  if (value instanceof PathValue) {
    const { nodes, edges } = itemIdsOf([value]);
    return [...nodes, ...edges];
  }
  if (Array.isArray(value)) return value.map(plainValue);
  return value;
}
