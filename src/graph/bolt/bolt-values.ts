/**
 * neo4j-driver's values turned into this service's graph values: nodes and relationships with their `elementId`
 * as id (stable for as long as the item exists), paths, lists and maps through, Neo4j integers as numbers when
 * exact (as text otherwise), temporal and spatial values as their ISO text.
 */
import neo4j, { type Node, type Path, type Relationship } from 'neo4j-driver';
import { EdgeValue, graphEdge, graphNode, NodeValue, PathValue, type GraphEdge, type GraphNode, type GraphValue, type PropertyValue } from '../items.js';

export function boltNode(node: Node, readAt: number): GraphNode {
  return graphNode(node.elementId, [...node.labels], boltProperties(node.properties), readAt);
}

export function boltEdge(rel: Relationship, readAt: number): GraphEdge {
  return graphEdge(rel.elementId, rel.type, rel.startNodeElementId, rel.endNodeElementId, boltProperties(rel.properties), readAt);
}

export function boltValue(value: unknown, readAt: number): GraphValue {
  if (neo4j.isNode(value)) return new NodeValue(boltNode(value as Node, readAt));
  if (neo4j.isRelationship(value)) return new EdgeValue(boltEdge(value as Relationship, readAt));
  if (neo4j.isPath(value)) {
    const path = value as Path;
    const nodes = [boltNode(path.start, readAt), ...path.segments.map((s) => boltNode(s.end, readAt))];
    return new PathValue({ nodes, edges: path.segments.map((s) => boltEdge(s.relationship, readAt)) });
  }
  if (Array.isArray(value)) return value.map((v) => boltValue(v, readAt));
  return boltProperty(value);
}

export function boltProperties(properties: Record<string, unknown>): Record<string, PropertyValue> {
  const out: Record<string, PropertyValue> = {};
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
  if (isTemporalOrSpatial(value)) return String(value);
  if (typeof value === 'object') return boltProperties(value as Record<string, unknown>);
  return String(value);
}

function isTemporalOrSpatial(value: unknown): boolean {
  return (
    neo4j.isDate(value) || neo4j.isDateTime(value) || neo4j.isLocalDateTime(value) || neo4j.isTime(value) ||
    neo4j.isLocalTime(value) || neo4j.isDuration(value) || neo4j.isPoint(value)
  );
}
