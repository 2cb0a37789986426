/**
 * neo4j-driver's values turned into this service's graph values: nodes and relationships with their `elementId`
 * as id (stable for as long as the item exists), paths, lists and maps through, Neo4j integers as numbers when
 * exact (as text otherwise), temporal values as their ISO text, points as maps ({srid, x, y, z?}), vectors as lists
 * of numbers, UUIDs as their text, bytes as base64.
 */
import neo4j, { type Node, type Path, type Relationship } from 'neo4j-driver';
import type { GraphEdge, GraphNode, PropertyValue } from '../graph-schemas.js';
import { byNames, EdgeValue, graphEdge, graphNode, NodeValue, PathValue, type GraphValue } from '../items.js';

/** `properties: false` leaves the item's properties out (RunOptions.properties). */
export function boltNode(node: Node, readAt: number, properties = true): GraphNode {
  return graphNode(node.elementId, [...node.labels], properties ? boltProperties(node.properties) : {}, readAt);
}

export function boltEdge(rel: Relationship, readAt: number, properties = true): GraphEdge {
  return graphEdge(rel.elementId, rel.type, rel.startNodeElementId, rel.endNodeElementId, properties ? boltProperties(rel.properties) : {}, readAt);
}

export function boltValue(value: unknown, readAt: number, properties = true): GraphValue {
  if (neo4j.isNode(value)) return new NodeValue(boltNode(value as Node, readAt, properties));
  if (neo4j.isRelationship(value)) return new EdgeValue(boltEdge(value as Relationship, readAt, properties));
  if (neo4j.isPath(value)) {
    const path = value as Path;
    const nodes = [boltNode(path.start, readAt, properties), ...path.segments.map((s) => boltNode(s.end, readAt, properties))];
    return new PathValue({ nodes, edges: path.segments.map((s) => boltEdge(s.relationship, readAt, properties)) });
  }
  if (Array.isArray(value)) return value.map((v) => boltValue(v, readAt, properties));
  return boltProperty(value);
}

export function boltProperties(properties: Record<string, unknown>): Record<string, PropertyValue> {
  // Keyed by the graph's own names (`__proto__` among them): no prototype.
  const out = byNames<PropertyValue>();
  for (const [key, value] of Object.entries(properties)) out[key] = boltProperty(value);
  return out;
}

function boltProperty(value: unknown): PropertyValue {
  if (value === null || value === undefined) return null;
  if (neo4j.isInt(value)) {
    const int = value as InstanceType<typeof neo4j.Integer>;
    return int.inSafeRange() ? int.toNumber() : int.toString();
  }
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map(boltProperty);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (isTemporal(value)) return String(value);
  // A point's own text (`Point{srid=4326.0, x=…}`) is no standard form: its coordinates are kept as numbers.
  if (neo4j.isPoint(value)) {
    const point = value as InstanceType<typeof neo4j.types.Point>;
    return { srid: boltProperty(point.srid), x: point.x, y: point.y, ...(point.z === undefined ? {} : { z: point.z }) };
  }
  if (neo4j.isVector(value)) return boltProperty(Array.from((value as InstanceType<typeof neo4j.Vector>).asTypedArray() as ArrayLike<number | bigint>));
  if (neo4j.isUUID(value)) return String(value);
  if (typeof value === 'object') return boltProperties(value as Record<string, unknown>);
  return String(value);
}

function isTemporal(value: unknown): boolean {
  return neo4j.isDate(value) || neo4j.isDateTime(value) || neo4j.isLocalDateTime(value) || neo4j.isTime(value) || neo4j.isLocalTime(value) || neo4j.isDuration(value);
}
