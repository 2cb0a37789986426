/**
 * Stable ids of the embedded graph's items, made from what the user's data says, not from Kùzu's internal
 * offsets (which a delete lets a later insert reuse):
 *
 *   node: <label>:<primary key>                       Person:alice
 *   edge: <type>:<id property>                        when the edge table has a property named `id`
 *         <type>:<source node id>-><target node id>   otherwise (parallel edges of one type share it)
 *
 * Each part is URI-encoded, so `:` and `->` only ever separate parts.
 */
export function nodeId(label: string, key: unknown): string {
  return `${encodedName(label)}:${encodedKey(key)}`;
}

export function edgeIdByProperty(type: string, id: unknown): string {
  return `${encodedName(type)}:${encodedKey(id)}`;
}

export function edgeIdByEnds(type: string, source: string, target: string): string {
  return `${encodedName(type)}:${source}->${target}`;
}

// An alert run makes the ids of every row it reads (60,000 rows: 180,000 ids), from a handful of labels and types:
// each name is encoded once. Bounded, so a graph of many tables cannot grow it without end.
const encodedNames = new Map<string, string>();
function encodedName(name: string): string {
  let encoded = encodedNames.get(name);
  if (encoded === undefined) {
    encoded = encodeURIComponent(name);
    if (encodedNames.size < 1_000) encodedNames.set(name, encoded);
  }
  return encoded;
}

/** An integer key's text is digits and a minus sign, which encodeURIComponent leaves as they are. */
function encodedKey(key: unknown): string {
  if (typeof key === 'bigint' || (typeof key === 'number' && Number.isSafeInteger(key))) return String(key);
  return encodeURIComponent(keyText(key));
}

export interface ParsedNodeId {
  label: string;
  key: string;
}

export type ParsedEdgeId = { type: string; id: string } | { type: string; source: ParsedNodeId; target: ParsedNodeId };

export function parseNodeId(id: string): ParsedNodeId | undefined {
  const parts = id.split(':');
  if (parts.length !== 2 || !parts[0] || parts[1] === undefined) return undefined;
  const label = decode(parts[0]);
  const key = decode(parts[1]);
  return label === undefined || key === undefined ? undefined : { label, key };
}

export function parseEdgeId(id: string): ParsedEdgeId | undefined {
  const colon = id.indexOf(':');
  if (colon <= 0) return undefined;
  const type = decode(id.slice(0, colon));
  const rest = id.slice(colon + 1);
  if (type === undefined) return undefined;
  const ends = rest.split('->');
  if (ends.length === 1) {
    const value = decode(rest);
    return value === undefined || rest.includes(':') ? undefined : { type, id: value };
  }
  if (ends.length !== 2) return undefined;
  const source = parseNodeId(ends[0]!);
  const target = parseNodeId(ends[1]!);
  return source && target ? { type, source, target } : undefined;
}

function keyText(key: unknown): string {
  if (key instanceof Date) return key.toISOString();
  return String(key);
}

function decode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}
