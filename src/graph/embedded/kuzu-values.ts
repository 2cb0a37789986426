/**
 * Kùzu's values of nodes, relationships and paths as its Node API hands them over (inside the Kùzu process), and the
 * one walk over a row's values that finds them: what the catalogue reads a batch's ids of (its refs, an alert run's
 * match keys), the ends it reads back, and a subgraph's items.
 */

/** Kùzu's internal id of an item: its table's number and its offset there. */
export interface InternalId {
  offset: number;
  table: number;
}
export interface KuzuNode {
  _id: InternalId;
  _label: string;
  [property: string]: unknown;
}
export interface KuzuRel {
  _id: InternalId;
  _label: string;
  _src: InternalId;
  _dst: InternalId;
  [property: string]: unknown;
}
export interface KuzuPath {
  _nodes: KuzuNode[];
  _rels: KuzuRel[];
}

/** What eachKuzuItem hands each node and relationship it meets to; `inMap`: met inside a map (or struct). */
export interface KuzuItemVisitor {
  node(node: KuzuNode, inMap: boolean): void;
  rel(rel: KuzuRel, inMap: boolean): void;
}

/**
 * Hands every node and relationship of `value` to `visitor`, in order, through lists and paths (their nodes, then
 * their relationships), and with `intoMaps` through the values of maps and structs too (a map's items are named in
 * its wire form, but belong to no match). The items' own properties are not walked: they hold no node or edge.
 */
export function eachKuzuItem(value: unknown, visitor: KuzuItemVisitor, intoMaps: boolean, inMap = false): void {
  if (value === null || typeof value !== 'object' || value instanceof Date) return;
  if (Array.isArray(value)) {
    for (const item of value) eachKuzuItem(item, visitor, intoMaps, inMap);
    return;
  }
  const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
  if (item._label !== undefined) {
    if (item._src !== undefined && item._dst !== undefined) return visitor.rel(item as KuzuRel, inMap);
    if (item._id !== undefined) return visitor.node(item as KuzuNode, inMap);
  }
  if (item._nodes !== undefined && item._rels !== undefined) {
    for (const node of item._nodes) eachKuzuItem(node, visitor, intoMaps, inMap);
    for (const rel of item._rels) eachKuzuItem(rel, visitor, intoMaps, inMap);
    return;
  }
  if (!intoMaps) return;
  for (const key in value) eachKuzuItem((value as Record<string, unknown>)[key], visitor, true, true);
}
