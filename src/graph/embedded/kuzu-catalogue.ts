/**
 * Inside the embedded graph's process: what the tables are (each node table's primary key, whether an edge table
 * has an `id` property), and the turning of Kùzu's values into wire values with stable ids (kuzu-ids.ts).
 */
import type { Connection, KuzuValue } from 'kuzu';
import { graphEdge, graphNode, type GraphEdge, type GraphNode, type PropertyValue } from '../items.js';
import { edgeIdByEnds, edgeIdByProperty, nodeId } from './kuzu-ids.js';
import type { WireEdge, WireNode, WireProperties, WireRow, WireValue } from './kuzu-protocol.js';
import { internalRef, nodeIdsByRef, type BatchRefs } from './row-refs.js';

interface InternalId {
  offset: number;
  table: number;
}
interface KuzuNode {
  _id: InternalId;
  _label: string;
  [property: string]: unknown;
}
interface KuzuRel {
  _id: InternalId;
  _label: string;
  _src: InternalId;
  _dst: InternalId;
  [property: string]: unknown;
}
interface KuzuPath {
  _nodes: KuzuNode[];
  _rels: KuzuRel[];
}

export interface NodeTable {
  name: string;
  primaryKey: string;
  primaryKeyType: string;
}

const INTEGER_TYPES = new Set(['INT8', 'INT16', 'INT32', 'INT64', 'INT128', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'SERIAL']);

/**
 * How to find a node of `table` by the key text of its id: integer keys compared as numbers (so the primary key
 * index serves the lookup), strings as they are, other types through their text form.
 */
export function nodeTableKeyParam(table: NodeTable, key: string): { value: KuzuValue; test(variable: string, param?: string): string } | undefined {
  const column = quoteName(table.primaryKey);
  if (INTEGER_TYPES.has(table.primaryKeyType)) {
    if (!/^-?\d{1,38}$/.test(key)) return undefined;
    const value = Number.isSafeInteger(Number(key)) ? Number(key) : BigInt(key);
    return { value, test: (v, p = 'k') => `${v}.${column} = $${p}` };
  }
  if (table.primaryKeyType === 'STRING') return { value: key, test: (v, p = 'k') => `${v}.${column} = $${p}` };
  return { value: key, test: (v, p = 'k') => `CAST(${v}.${column} AS STRING) = $${p}` };
}

export function quoteName(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

const KUZU_FIELDS = new Set(['_id', '_label', '_src', '_dst']);
// A property's value holds no node or edge, so no end to name.
const NO_IDS = new Map<number, string>();
/** Kùzu's internal id of an item as one number (row-refs.ts), the key of the maps below. */
const internalKey = internalRef;
/** Kùzu's internal id as text: the id of an item whose stable id could not be made, and a bare internal id's value. */
const internalText = (id: InternalId) => `${id.table}:${id.offset}`;
/** A node ref's internal id again. */
const internalIdOf = (ref: number): InternalId => ({ table: Math.floor(ref / 2 ** 40), offset: ref % 2 ** 40 });
/** batchRefs: the label of a node met so far only as an edge's end. */
const AWAITED = -2;


async function rowsOf(conn: Connection, statement: string, params?: Record<string, KuzuValue>): Promise<Record<string, KuzuValue>[]> {
  const result = params ? await conn.execute(await conn.prepare(statement), params) : await conn.query(statement);
  const single = Array.isArray(result) ? result[result.length - 1]! : result;
  return single.getAll();
}

/**
 * The distinct nodes and edges of a run's rows, in the API's shapes (GraphSource.subgraph). An item met again is
 * not converted again: a 2-hop pattern's 526 rows held 2,630 items, 1,279 of them distinct.
 */
export class ItemSet {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges = new Map<string, GraphEdge>();
  /** The stable ids of the nodes met so far, by Kùzu's internal id: for the ends of later edges too. */
  readonly known = new Map<number, string>();
  /** Kùzu's internal ids of the items added: an item met again is skipped before its id is made again. */
  readonly added = new Set<number>();

  constructor(readonly readAt: number) {}

  get size(): number {
    return this.nodes.size + this.edges.size;
  }
}

export class Catalogue {
  readonly nodeTables = new Map<string, NodeTable>();
  /** Edge tables, and whether each has an `id` property (which then names its edges). */
  readonly relTables = new Map<string, { hasId: boolean }>();
  /** Kùzu's internal table number of each node table, learned from the data (it is not show_tables' id). */
  readonly #tableByNumber = new Map<number, string>();

  async load(conn: Connection): Promise<void> {
    this.nodeTables.clear();
    this.relTables.clear();
    this.#tableByNumber.clear();
    for (const table of await rowsOf(conn, 'CALL show_tables() RETURN *')) {
      const name = String(table.name);
      const columns = await rowsOf(conn, `CALL table_info(${JSON.stringify(name)}) RETURN *`);
      if (table.type === 'NODE') {
        const pk = columns.find((c) => c['primary key'] === true);
        if (pk) this.nodeTables.set(name, { name, primaryKey: String(pk.name), primaryKeyType: String(pk.type) });
      } else if (table.type === 'REL') {
        this.relTables.set(name, { hasId: columns.some((c) => c.name === 'id') });
      }
    }
  }

  /** Learns the internal numbers of node tables not seen yet (one row of each). */
  async #learnTableNumbers(conn: Connection): Promise<void> {
    const known = new Set(this.#tableByNumber.values());
    for (const table of this.nodeTables.values()) {
      if (known.has(table.name)) continue;
      const [row] = await rowsOf(conn, `MATCH (n:${quoteName(table.name)}) RETURN id(n) AS i LIMIT 1`);
      if (row) this.#tableByNumber.set((row.i as unknown as InternalId).table, table.name);
    }
  }

  /**
   * Turns a batch of rows into wire rows, each value in the order of `columns`. An edge names its ends by their
   * stable ids, which Kùzu does not give (only internal ids): ends not among the batch's own nodes are looked up,
   * per table, in one query each. `properties: false` leaves the items' properties out.
   */
  async toWireRows(conn: Connection, rows: Record<string, KuzuValue>[], columns: readonly string[], properties: boolean): Promise<WireRow[]> {
    // The batch's refs (as an alert run's identified batch is sent) name every node and edge end once, by ref.
    return this.wireRows(rows, columns, properties, nodeIdsByRef(await this.batchRefs(conn, rows, columns)));
  }

  /** Rows as wire rows, with the stable ids of their batch's nodes and edge ends (nodeIdsByRef of its batchRefs), by ref. */
  wireRows(rows: Record<string, KuzuValue>[], columns: readonly string[], properties: boolean, known: Map<number, string>): WireRow[] {
    return rows.map((row) => columns.map((column) => this.#wire(row[column], properties, known)));
  }

  /**
   * A batch's rows by the ids of their nodes and edges, in numbers (row-refs.ts): met the same way (through lists
   * and paths, not inside maps) as the service meets them in the rows' wire form decoded. Each node met (inside maps
   * too, whose wire form names them) is noted once with its label and primary key; ends of edges not met as nodes
   * are looked up, per table, in one query each, as for wire rows.
   */
  async batchRefs(conn: Connection, rows: Record<string, KuzuValue>[], columns: readonly string[]): Promise<BatchRefs> {
    const refs: BatchRefs = { rows: [], nodes: [], labels: [], keys: [], names: [], edgeIds: [] };
    const out = refs.rows;
    // Each node's index in `refs.nodes`, by table number, then offset: small integers, which a Map holds unboxed
    // (a ref past 2^31 would be a heap number each).
    const indexes: Map<number, number>[] = [];
    // An edge's end gets its index when the edge is met; its label and key wait for the node itself (most ends are
    // among the batch's nodes), or are looked up once the batch is read.
    let awaited = 0;
    const names = new Map<string, number>();
    const nameOf = (name: string) => {
      let index = names.get(name);
      if (index === undefined) names.set(name, (index = refs.names.push(name) - 1));
      return index;
    };
    const indexOf = (id: InternalId): number => {
      let offsets = indexes[id.table];
      if (offsets === undefined) indexes[id.table] = offsets = new Map();
      let index = offsets.get(id.offset);
      if (index === undefined) {
        offsets.set(id.offset, (index = refs.nodes.push(internalKey(id)) - 1));
        refs.labels.push(AWAITED);
        refs.keys.push(undefined);
        awaited++;
      }
      return index;
    };
    // The rows of a batch mostly repeat one label and one type: the last ones' lookups are kept at hand.
    let lastLabel: string | undefined;
    let lastLabelIndex = -1;
    let lastKey: string | undefined;
    let lastType: string | undefined;
    let lastTypeIndex = -1;
    let lastTypeHasId = false;
    const note = (node: KuzuNode): number => {
      const index = indexOf(node._id);
      if (refs.labels[index] !== AWAITED) return index;
      if (node._label !== lastLabel) {
        lastLabel = node._label;
        lastKey = this.nodeTables.get(lastLabel)?.primaryKey;
        lastLabelIndex = lastKey === undefined ? -1 : nameOf(lastLabel);
      }
      refs.labels[index] = lastLabelIndex;
      refs.keys[index] = lastKey === undefined ? `?${internalText(node._id)}` : node[lastKey];
      awaited--;
      return index;
    };
    // A row's nodes and edges (4 numbers each), gathered apart (filled up to a count: emptying an array by its
    // length is a slow path), then written after their counts. Inside a map (depth > 0) nodes and edge ends are
    // noted, as its wire form names them, but the match is not theirs.
    const nodes: number[] = [];
    const edges: number[] = [];
    let nodeCount = 0;
    let edgeNumbers = 0;
    let mapDepth = 0;
    const visit = (value: unknown): void => {
      if (value === null || typeof value !== 'object' || value instanceof Date) return;
      if (Array.isArray(value)) {
        for (const item of value) visit(item);
        return;
      }
      const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
      if (item._label !== undefined) {
        if (item._src !== undefined && item._dst !== undefined) {
          const [source, target] = [indexOf(item._src), indexOf(item._dst)];
          if (mapDepth > 0) return;
          if (item._label !== lastType) {
            lastType = item._label;
            lastTypeIndex = nameOf(lastType);
            lastTypeHasId = this.relTables.get(lastType)?.hasId ?? false;
          }
          const named = lastTypeHasId && item.id !== null && item.id !== undefined;
          edges[edgeNumbers++] = lastTypeIndex;
          edges[edgeNumbers++] = named ? refs.edgeIds.push(item.id) - 1 : -1;
          edges[edgeNumbers++] = source;
          edges[edgeNumbers++] = target;
          return;
        }
        if (item._id !== undefined) {
          const index = note(item as KuzuNode);
          if (mapDepth === 0) nodes[nodeCount++] = index;
          return;
        }
      }
      if (item._nodes !== undefined && item._rels !== undefined) {
        for (const node of item._nodes) visit(node);
        for (const rel of item._rels) visit(rel);
        return;
      }
      mapDepth++;
      for (const key in value) visit((value as Record<string, unknown>)[key]);
      mapDepth--;
    };
    for (const row of rows) {
      nodeCount = edgeNumbers = 0;
      for (const column of columns) visit(row[column]);
      out.push(nodeCount, edgeNumbers / 4);
      for (let i = 0; i < nodeCount; i++) out.push(nodes[i]!);
      for (let i = 0; i < edgeNumbers; i++) out.push(edges[i]!);
    }
    if (awaited > 0) {
      // Ends met only as ends: their ids looked up (their label -1: the id is made already).
      const missing: InternalId[] = [];
      refs.labels.forEach((label, i) => {
        if (label === AWAITED) missing.push(internalIdOf(refs.nodes[i]!));
      });
      const found = new Map<number, string>();
      await this.#resolve(conn, missing, found);
      refs.labels.forEach((label, i) => {
        if (label !== AWAITED) return;
        refs.labels[i] = -1;
        refs.keys[i] = found.get(refs.nodes[i]!) ?? `?${internalText(internalIdOf(refs.nodes[i]!))}`;
      });
    }
    return refs;
  }

  /**
   * Adds the nodes and edges of `rows` (through paths and lists) to `items`, row by row, until it holds `maxItems`
   * (a row is added whole). Answers whether it is full. Ends of edges not met as nodes are looked up, as in toWireRows.
   */
  async addRows(conn: Connection, rows: Record<string, KuzuValue>[], columns: readonly string[], items: ItemSet, maxItems: number): Promise<boolean> {
    const missing = new Map<number, InternalId>();
    const visit = (value: unknown): void => {
      if (value === null || typeof value !== 'object' || value instanceof Date) return;
      if (Array.isArray(value)) return value.forEach(visit);
      const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
      if (item._nodes && item._rels) return [...item._nodes, ...item._rels].forEach(visit);
      if (item._src && item._dst && item._label) {
        for (const end of [item._src, item._dst]) if (!items.known.has(internalKey(end))) missing.set(internalKey(end), end);
      } else if (item._id && item._label && !items.known.has(internalKey(item._id))) {
        items.known.set(internalKey(item._id), this.#nodeId(item as KuzuNode) ?? `?${internalText(item._id)}`);
      }
    };
    for (const row of rows) for (const column of columns) visit(row[column]);
    for (const key of missing.keys()) if (items.known.has(key)) missing.delete(key);
    if (missing.size) await this.#resolve(conn, [...missing.values()], items.known);
    for (const row of rows) {
      for (const column of columns) this.#addItems(row[column], items);
      if (items.size >= maxItems) return true;
    }
    return false;
  }

  /** As Subgraph.add: nodes, edges, paths and lists of them (not maps). */
  #addItems(value: unknown, items: ItemSet): void {
    if (value === null || typeof value !== 'object' || value instanceof Date) return;
    if (Array.isArray(value)) {
      for (const item of value) this.#addItems(item, items);
      return;
    }
    const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
    if (item._nodes && item._rels) {
      for (const node of item._nodes) this.#addItems(node, items);
      for (const rel of item._rels) this.#addItems(rel, items);
    } else if (item._src && item._dst && item._label) {
      if (item._id && !firstTime(items.added, internalKey(item._id))) return;
      const [id, , source, target] = this.#edge(item as KuzuRel, false, items.known);
      if (!items.edges.has(id)) items.edges.set(id, graphEdge(id, item._label, source, target, this.#properties(item as KuzuRel), items.readAt));
    } else if (item._id && item._label) {
      const key = internalKey(item._id);
      if (!firstTime(items.added, key)) return;
      const id = items.known.get(key)!;
      if (!items.nodes.has(id)) items.nodes.set(id, graphNode(id, [item._label], this.#properties(item as KuzuNode), items.readAt));
    }
  }

  async #resolve(conn: Connection, ids: InternalId[], known: Map<number, string>): Promise<void> {
    const byTable = new Map<number, number[]>();
    for (const id of ids) byTable.set(id.table, [...(byTable.get(id.table) ?? []), id.offset]);
    if ([...byTable.keys()].some((n) => !this.#tableByNumber.has(n))) await this.#learnTableNumbers(conn);
    for (const [number, offsets] of byTable) {
      const table = this.nodeTables.get(this.#tableByNumber.get(number) ?? '');
      if (!table) continue;
      const found = await rowsOf(
        conn,
        `MATCH (n:${quoteName(table.name)}) WHERE offset(id(n)) IN $offsets RETURN offset(id(n)) AS o, n.${quoteName(table.primaryKey)} AS k`,
        { offsets },
      );
      for (const row of found) known.set(internalKey({ table: number, offset: Number(row.o) }), nodeId(table.name, row.k));
    }
  }

  #nodeId(node: KuzuNode): string | undefined {
    const table = this.nodeTables.get(node._label);
    return table ? nodeId(node._label, node[table.primaryKey]) : undefined;
  }

  /** `ids`: the ids already made of some nodes, by their object (toWireRows). */
  #wire(value: unknown, properties: boolean, known: Map<number, string>): WireValue {
    if (value === null || value === undefined) return null;
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) return value.map((v) => this.#wire(v, properties, known));
    if (typeof value !== 'object') return String(value);
    const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
    if (item._nodes && item._rels) return { p: [item._nodes.map((n) => this.#node(n, properties, known)), item._rels.map((r) => this.#edge(r, properties, known))] };
    if (item._src && item._dst && item._label) return { e: this.#edge(item as KuzuRel, properties, known) };
    if (item._id && item._label) return { n: this.#node(item as KuzuNode, properties, known) };
    if ('offset' in item && 'table' in item && Object.keys(item).length === 2) return internalText(item as unknown as InternalId);
    const map: Record<string, WireValue> = {};
    for (const [k, v] of Object.entries(value)) map[k] = this.#wire(v, properties, known);
    return { m: map };
  }

  /** `known`: the ids already made of the batch's nodes, by ref (a node inside a property value is not among them). */
  #node(node: KuzuNode, properties: boolean, known: Map<number, string>): WireNode {
    const id = known.get(internalKey(node._id)) ?? this.#nodeId(node) ?? `?${internalText(node._id)}`;
    return properties ? [id, node._label, this.#properties(node)] : [id, node._label];
  }

  #edgeId(rel: KuzuRel, known: Map<number, string>, source = endId(rel._src, known), target = endId(rel._dst, known)): string {
    return this.relTables.get(rel._label)?.hasId && rel.id !== null && rel.id !== undefined ? edgeIdByProperty(rel._label, rel.id) : edgeIdByEnds(rel._label, source, target);
  }

  #edge(rel: KuzuRel, properties: boolean, known: Map<number, string>): WireEdge {
    const [source, target] = [endId(rel._src, known), endId(rel._dst, known)];
    const id = this.#edgeId(rel, known, source, target);
    return properties ? [id, rel._label, source, target, this.#properties(rel)] : [id, rel._label, source, target];
  }

  #properties(item: Record<string, unknown>): WireProperties {
    const properties: WireProperties = {};
    for (const [k, v] of Object.entries(item)) {
      // Kùzu's own fields, and the properties an item lacks (Kùzu gives every column of the table, null when unset).
      if (KUZU_FIELDS.has(k) || v === null || v === undefined) continue;
      properties[k] = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : plain(this.#wire(v, true, NO_IDS));
    }
    return properties;
  }
}

/** An edge's end's stable id, from the ids made of its batch's nodes. */
function endId(end: InternalId, known: Map<number, string>): string {
  return known.get(internalKey(end)) ?? `?${internalText(end)}`;
}

/** Adds `key` to `seen`: false when it was there already. */
function firstTime(seen: Set<number>, key: number): boolean {
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/** A property's value as plain JSON: a map's tag dropped. */
function plain(value: WireValue): PropertyValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plain);
  if ('m' in value) return Object.fromEntries(Object.entries(value.m).map(([k, v]) => [k, plain(v)]));
  return null;
}
