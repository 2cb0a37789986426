/**
 * Inside the embedded graph's process: what the tables are (each node table's primary key, whether an edge table
 * has an `id` property), and the turning of Kùzu's values into wire values with stable ids (kuzu-ids.ts).
 */
import type { Connection, KuzuValue } from 'kuzu';
import type { PropertyValue } from '../items.js';
import { edgeIdByEnds, edgeIdByProperty, nodeId } from './kuzu-ids.js';
import type { WireEdge, WireNode, WireProperties, WireRow, WireValue } from './kuzu-protocol.js';

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
const NO_IDS = new Map<string, string>();
const internalKey = (id: InternalId) => `${id.table}:${id.offset}`;

async function rowsOf(conn: Connection, statement: string, params?: Record<string, KuzuValue>): Promise<Record<string, KuzuValue>[]> {
  const result = params ? await conn.execute(await conn.prepare(statement), params) : await conn.query(statement);
  const single = Array.isArray(result) ? result[result.length - 1]! : result;
  return single.getAll();
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
  async toWireRows(conn: Connection, rows: Record<string, KuzuValue>[], columns: readonly string[], properties: boolean, known: Map<string, string>): Promise<WireRow[]> {
    const missing = new Map<string, InternalId>();
    const visit = (value: unknown): void => {
      if (value === null || typeof value !== 'object' || value instanceof Date) return;
      if (Array.isArray(value)) return value.forEach(visit);
      const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
      if (item._nodes && item._rels) return [...item._nodes, ...item._rels].forEach(visit);
      if (item._src && item._dst && item._label) {
        for (const end of [item._src, item._dst]) if (!known.has(internalKey(end))) missing.set(internalKey(end), end);
        return;
      }
      if (item._id && item._label) {
        const id = this.#nodeId(item as KuzuNode);
        if (id) known.set(internalKey(item._id), id);
        return;
      }
      Object.values(value).forEach(visit);
    };
    rows.forEach(visit);
    for (const key of missing.keys()) if (known.has(key)) missing.delete(key);
    if (missing.size) await this.#resolve(conn, [...missing.values()], known);
    const wire = (value: unknown) => this.#wire(value, properties, known);
    return rows.map((row) => columns.map((column) => wire(row[column])));
  }

  async #resolve(conn: Connection, ids: InternalId[], known: Map<string, string>): Promise<void> {
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
      for (const row of found) known.set(`${number}:${String(row.o)}`, nodeId(table.name, row.k));
    }
  }

  #nodeId(node: KuzuNode): string | undefined {
    const table = this.nodeTables.get(node._label);
    return table ? nodeId(node._label, node[table.primaryKey]) : undefined;
  }

  #wire(value: unknown, properties: boolean, known: Map<string, string>): WireValue {
    if (value === null || value === undefined) return null;
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) return value.map((v) => this.#wire(v, properties, known));
    if (typeof value !== 'object') return String(value);
    const item = value as Partial<KuzuNode & KuzuRel & KuzuPath>;
    if (item._nodes && item._rels) return { p: [item._nodes.map((n) => this.#node(n, properties)), item._rels.map((r) => this.#edge(r, properties, known))] };
    if (item._src && item._dst && item._label) return { e: this.#edge(item as KuzuRel, properties, known) };
    if (item._id && item._label) return { n: this.#node(item as KuzuNode, properties) };
    if ('offset' in item && 'table' in item && Object.keys(item).length === 2) return internalKey(item as unknown as InternalId);
    const map: Record<string, WireValue> = {};
    for (const [k, v] of Object.entries(value)) map[k] = this.#wire(v, properties, known);
    return { m: map };
  }

  #node(node: KuzuNode, properties: boolean): WireNode {
    const id = this.#nodeId(node) ?? `?${internalKey(node._id)}`;
    return properties ? [id, node._label, this.#properties(node)] : [id, node._label];
  }

  #edge(rel: KuzuRel, properties: boolean, known: Map<string, string>): WireEdge {
    const source = known.get(internalKey(rel._src)) ?? `?${internalKey(rel._src)}`;
    const target = known.get(internalKey(rel._dst)) ?? `?${internalKey(rel._dst)}`;
    const id = this.relTables.get(rel._label)?.hasId && rel.id !== null && rel.id !== undefined ? edgeIdByProperty(rel._label, rel.id) : edgeIdByEnds(rel._label, source, target);
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

/** A property's value as plain JSON: a map's tag dropped. */
function plain(value: WireValue): PropertyValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plain);
  if ('m' in value) return Object.fromEntries(Object.entries(value.m).map(([k, v]) => [k, plain(v)]));
  return null;
}
