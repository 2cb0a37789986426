/**
 * Graph answers as one caller may read them (issue 40, docs/security.md): what their groups may not read on the
 * source does not exist for them. A node is left out unless each of its categories is readable; an edge unless its
 * type and both its ends are (an edge's end names its node: an embedded node's id is `<label>:<key>`, so an edge kept
 * beside a hidden end would tell the hidden node's category and key); a property key the caller may not read is
 * removed from the items kept. `truncatedByAccess` says whether anything was left out or removed.
 *
 * A caller who reads the whole graph (Admin, the built-in Analyst, a group with every category and type and no
 * property-key rights) gets the items as they are: nothing is parsed, copied or looked at.
 */
import type { SubgraphAnswer } from '../graph/graph-source.js';
import type { GraphEdge, GraphNode, PropertyValue } from '../graph/graph-schemas.js';
import { byNames } from '../graph/items.js';
import type { SourceAccess } from './source-access.js';

export interface ReadableGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Something was left out: an item, or a property of an item kept. */
  truncatedByAccess: boolean;
}

/**
 * The categories of an edge's end that is not among the items being filtered (a lookup's or a drawing's edge whose
 * end was fetched on its own), or undefined when they are not known: such an end counts as not readable.
 */
export type EndCategories = (nodeId: string) => readonly string[] | undefined;

/**
 * `access.readsProperty`, remembered per access, kind, item types and key: an answer asks the same few questions for
 * thousands of items, and each asks the groups' rights four times over (source-access.ts); remembered, a property
 * costs two map lookups (bench/README.md, "Access rights").
 */
type PropertyRules = Record<'node' | 'edge', { one: Map<string, Map<string, boolean>>; many: Map<string, Map<string, boolean>> }>;
const propertyRules = new WeakMap<SourceAccess, PropertyRules>();

function propertyRule(access: SourceAccess, kind: 'node' | 'edge', itemTypes: readonly string[]): Map<string, boolean> {
  let rules = propertyRules.get(access);
  if (!rules) propertyRules.set(access, (rules = { node: { one: new Map(), many: new Map() }, edge: { one: new Map(), many: new Map() } }));
  // One category or type, the usual case, is its own name: no string is made per item. Several (a Neo4j node's
  // labels) are their JSON, in a map of their own, so no name can pass for a list.
  const [byTypes, types] = itemTypes.length === 1 ? [rules[kind].one, itemTypes[0]!] : [rules[kind].many, JSON.stringify(itemTypes)];
  let rule = byTypes.get(types);
  if (!rule) byTypes.set(types, (rule = new Map()));
  return rule;
}

/**
 * The readable properties of an item of `itemTypes` (a node's categories, an edge's type): the same object when
 * every key is readable (nothing copied), else a copy without the others.
 */
function readableProperties(access: SourceAccess, kind: 'node' | 'edge', itemTypes: readonly string[], properties: Record<string, PropertyValue>) {
  let kept: Record<string, PropertyValue> | undefined;
  const rule = propertyRule(access, kind, itemTypes);
  // `for…in` would also walk a prototype's keys: the property maps may be prototype-less (byNames), or parsed JSON.
  const keys = Object.keys(properties);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    let readable = rule.get(key);
    if (readable === undefined) rule.set(key, (readable = access.readsProperty(kind, itemTypes, key)));
    if (readable && kept) kept[key] = properties[key]!;
    else if (!readable && !kept) {
      // The keys are the data's own (`__proto__` among them): copied into an object without a prototype.
      kept = byNames<PropertyValue>();
      for (let j = 0; j < i; j++) kept[keys[j]!] = properties[keys[j]!]!;
    }
  }
  return kept ?? properties;
}

/** The node as the caller may read it (its readable properties), or undefined when they may not read it. */
export function readableNode(access: SourceAccess, node: GraphNode): GraphNode | undefined {
  if (access.readsWholeGraph) return node;
  if (!access.readsNode(node.data.categories)) return undefined;
  const properties = readableProperties(access, 'node', node.data.categories, node.data.properties);
  return properties === node.data.properties ? node : { ...node, data: { ...node.data, properties } };
}

/**
 * The edge as the caller may read it, or undefined when they may not read its type or one of its ends
 * (`endReadable` says, by the end's node id).
 */
export function readableEdge(access: SourceAccess, edge: GraphEdge, endReadable: (nodeId: string) => boolean): GraphEdge | undefined {
  if (access.readsWholeGraph) return edge;
  const { type, source, target } = edge.data;
  if (!access.readsEdgeType(type) || !endReadable(source) || !endReadable(target)) return undefined;
  // The ends beside `data` (where LKE's client reads them) are the same ids: an edge whose two copies disagree is
  // judged by both.
  if ((edge.source !== source && !endReadable(edge.source)) || (edge.target !== target && !endReadable(edge.target))) return undefined;
  const properties = readableProperties(access, 'edge', [type], edge.data.properties);
  return properties === edge.data.properties ? edge : { ...edge, data: { ...edge.data, properties } };
}

/**
 * `graph` as the caller may read it. An edge's end is readable when it is among the nodes kept, or, for an end not
 * among `graph`'s nodes, when `endCategories` knows its categories and they are readable; a query's answer gives no
 * `endCategories`, so there an edge is kept only beside its two ends. The items given are never changed (a drawing's
 * are cached, shared by every caller); for a caller who reads the whole graph, the arrays given are answered.
 */
export function readableGraph(access: SourceAccess, graph: { nodes: GraphNode[]; edges: GraphEdge[] }, endCategories?: EndCategories): ReadableGraph {
  if (access.readsWholeGraph) return { nodes: graph.nodes, edges: graph.edges, truncatedByAccess: false };
  let truncatedByAccess = false;
  const nodes: GraphNode[] = [];
  const given = new Set<string>();
  const kept = new Set<string>();
  for (const node of graph.nodes) {
    given.add(node.id);
    const readable = readableNode(access, node);
    if (readable !== node) truncatedByAccess = true;
    if (!readable) continue;
    nodes.push(readable);
    kept.add(node.id);
  }
  const endReadable = (id: string) => {
    if (kept.has(id)) return true;
    if (given.has(id) || !endCategories) return false;
    const categories = endCategories(id);
    return categories !== undefined && access.readsNode(categories);
  };
  const edges: GraphEdge[] = [];
  for (const edge of graph.edges) {
    const readable = readableEdge(access, edge, endReadable);
    if (readable !== edge) truncatedByAccess = true;
    if (readable) edges.push(readable);
  }
  return { nodes, edges, truncatedByAccess };
}

/** The answer of `run/query` as UTF-8 JSON bytes, as the route writes them: the adapter's own when nothing is left out. */
export interface ReadableAnswer {
  nodes: Buffer;
  edges: Buffer;
  truncatedByAccess: boolean;
}

/**
 * A query's answer (GraphSource.subgraph: the JSON bytes of its nodes and edges) as the caller may read it. For a
 * caller who reads the whole graph the bytes go as they are (run/query's fast path: bench/README.md, "Graph");
 * otherwise they are parsed, filtered and written again.
 */
export function readableAnswer(access: SourceAccess, answer: SubgraphAnswer): ReadableAnswer {
  if (access.readsWholeGraph) return { nodes: answer.nodes, edges: answer.edges, truncatedByAccess: false };
  const graph = { nodes: JSON.parse(answer.nodes.toString('utf8')) as GraphNode[], edges: JSON.parse(answer.edges.toString('utf8')) as GraphEdge[] };
  const readable = readableGraph(access, graph);
  if (!readable.truncatedByAccess) return { nodes: answer.nodes, edges: answer.edges, truncatedByAccess: false };
  return { nodes: Buffer.from(JSON.stringify(readable.nodes)), edges: Buffer.from(JSON.stringify(readable.edges)), truncatedByAccess: true };
}
