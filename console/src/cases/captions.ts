import type { GraphNode } from '../types';

// How a node is named on the case page: in the drawing, and in the lists beside it.

/** The property that names a node best, by the usual names; else none (the id says it). */
const KEY_PROPERTIES = ['name', 'title', 'label', 'number', 'key', 'id'];

export function keyPropertyOf(node: GraphNode): string | undefined {
  const properties = node.data.properties;
  const key = KEY_PROPERTIES.find((k) => properties[k] !== undefined && properties[k] !== null);
  return key === undefined ? undefined : String(properties[key]);
}

/** "Client\nAlice": its categories over its key property. */
export const captionOf = (node: GraphNode) => [node.data.categories.join(', '), keyPropertyOf(node) ?? node.id].filter(Boolean).join('\n');
