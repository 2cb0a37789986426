/**
 * Inside the embedded graph's process: what the tables are (each node table's primary key, whether an edge table
 * has an `id` property), and the turning of Kùzu's values into wire values with stable ids (kuzu-ids.ts). An item
 * whose id cannot be made of its data (its table unknown to the catalogue) fails the query, naming its table: ids
 * are never made of Kùzu's internal offsets (docs/graph.md).
 */
import type { Connection, KuzuValue } from 'kuzu';
import type { GraphEdge, GraphNode, PropertyValue } from '../graph-schemas.js';
import { byNames, graphEdge, graphNode } from '../items.js';
import { edgeIdByEnds, edgeIdByProperty, nodeId } from './kuzu-ids.js';
import type { WireEdge, WireNode, WireProperties, WireRow, WireValue } from './kuzu-protocol.js';
import { eachKuzuItem, type InternalId, type KuzuNode, type KuzuPath, type KuzuRel } from './kuzu-values.js';
import { internalRef, nodeIdsByRef, type BatchRefs } from './row-refs.js';

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

/**
 * A name as a Cypher string literal, for the catalogue's calls (`table_info('…')`), whose argument must be a literal
 * (a parameter is refused): quoted with `'`, a backslash and a quote escaped as Kùzu's lexer reads them.
 */
export function stringLiteral(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

const KUZU_FIELDS = new Set(['_id', '_label', '_src', '_dst']);
// A property's value holds no node or edge, so no end to name.
const NO_IDS = new Map<number, string>();
/** Kùzu's internal id of an item as one number (row-refs.ts), the key of the maps below. */
const internalKey = internalRef;
/** Kùzu's internal id as text: a bare internal id's value (`RETURN id(n)`), never an item's id. */
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
  /**
   * Tables whose columns Kùzu's catalogue does not answer, with its message (table_info splits its argument at `.`:
   * `R.x` is table x of a database R, whatever the quoting). Their items can have no id, so a query meeting one fails
   * naming it. A write that makes one is refused (unreadableSince); a graph that has one from before still opens.
   */
  readonly unreadable = new Map<string, string>();
  /** Each table's name by its show_tables id, which a rename keeps: what a write made or renamed, compared. */
  readonly #names = new Map<number, string>();
  /** The node tables, readable or not: their internal numbers are learned to name a table in a failure too. */
  readonly #nodeTableNames = new Set<string>();
  /** Kùzu's internal table number of each node table, learned from the data (it is not show_tables' id). */
  readonly #tableByNumber = new Map<number, string>();

  /**
   * Reads the tables. With `refuseNew` (in the transaction of a load, which may have made tables), a table the
   * catalogue cannot read and did not know fails the call, naming it: Kùzu has rolled the transaction back then
   * (a failed statement ends it), so the load changed nothing. One known from before is not asked again.
   */
  async load(conn: Connection, refuseNew = false): Promise<void> {
    const nodeTables = new Map<string, NodeTable>();
    const relTables = new Map<string, { hasId: boolean }>();
    const unreadable = new Map<string, string>();
    const names = new Map<number, string>();
    const nodeTableNames = new Set<string>();
    for (const table of await rowsOf(conn, 'CALL show_tables() RETURN *')) {
      const name = String(table.name);
      names.set(Number(table.id), name);
      if (table.type !== 'NODE' && table.type !== 'REL') continue;
      if (table.type === 'NODE') nodeTableNames.add(name);
      const known = this.unreadable.get(name);
      if (refuseNew && known !== undefined) {
        unreadable.set(name, known);
        continue;
      }
      let columns: Record<string, KuzuValue>[];
      try {
        columns = await rowsOf(conn, `CALL table_info(${stringLiteral(name)}) RETURN *`);
      } catch (err) {
        const why = engineMessage(err);
        if (refuseNew) throw new Error(refusedTable(name, why, 'created'), { cause: err });
        unreadable.set(name, why);
        continue;
      }
      if (table.type === 'NODE') {
        const pk = columns.find((c) => c['primary key'] === true);
        if (pk) nodeTables.set(name, { name, primaryKey: String(pk.name), primaryKeyType: String(pk.type) });
      } else {
        relTables.set(name, { hasId: columns.some((c) => c.name === 'id') });
      }
    }
    // Replaced at once, with no wait between: rows converted meanwhile (another connection's run) meet the tables as
    // they were or as they are, never half of them.
    refill(this.nodeTables, nodeTables);
    refill(this.relTables, relTables);
    refill(this.unreadable, unreadable);
    refill(this.#names, names);
    this.#nodeTableNames.clear();
    for (const name of nodeTableNames) this.#nodeTableNames.add(name);
    this.#tableByNumber.clear();
  }

  /** Each table's name by its show_tables id, as last read: what a write is compared with (unreadableSince). */
  tableNames(): ReadonlyMap<number, string> {
    return new Map(this.#names);
  }

  /**
   * The tables that a write (run between `before`, tableNames then, and the catalogue's reload after it) made or
   * renamed to a name the catalogue cannot read: the statement that undoes each (a table made is dropped, one renamed
   * is renamed back), and why it is refused, naming it.
   */
  unreadableSince(before: ReadonlyMap<number, string>): { undo: string; refusal: string }[] {
    const found: { undo: string; refusal: string }[] = [];
    for (const [id, name] of this.#names) {
      const why = this.unreadable.get(name);
      const former = before.get(id);
      if (why === undefined || former === name) continue;
      found.push(
        former === undefined
          ? { undo: `DROP TABLE ${quoteName(name)}`, refusal: refusedTable(name, why, 'created') }
          : { undo: `ALTER TABLE ${quoteName(name)} RENAME TO ${quoteName(former)}`, refusal: refusedTable(name, why, 'renamed') },
      );
    }
    return found;
  }

  /** Why an item of table `label` can have no id: its table unreadable, or not in the catalogue (yet). */
  #noId(label: string): Error {
    const why = this.unreadable.get(label);
    return new Error(
      why === undefined
        ? `the table ${JSON.stringify(label)} is not in the embedded graph's catalogue (made by a write still under way?): its items can have no stable id; ask again`
        : unreadableTable(label, why),
    );
  }

  /** Learns the internal numbers of node tables not seen yet (one row of each), unreadable ones too (to name them). */
  async #learnTableNumbers(conn: Connection): Promise<void> {
    const known = new Set(this.#tableByNumber.values());
    for (const name of this.#nodeTableNames) {
      if (known.has(name)) continue;
      const [row] = await rowsOf(conn, `MATCH (n:${quoteName(name)}) RETURN id(n) AS i LIMIT 1`);
      if (row) this.#tableByNumber.set((row.i as unknown as InternalId).table, name);
    }
  }

  /**
   * Sets the ends (`_src`, `_dst`) of every relationship in `rows` (through paths, lists and maps) to those of the
   * stored relationship, read back by its internal id: one query a type. Kùzu answers the relationships of a
   * recursive pattern that closes on its start variable (`MATCH p = (a)-[:T*3..3]->(a)`) with their ends swapped
   * (the path walked backwards; called for the runs whose plan has a recursive extend: kuzu-plan.ts), so an edge
   * named by its ends named one that does not exist, was drawn backwards, and a ring found that way and another way
   * was two matches. Called before the rows' ids are made (the rows are changed in place, and so are held with them).
   */
  async storedEnds(conn: Connection, rows: Record<string, KuzuValue>[], columns: readonly string[]): Promise<void> {
    // The relationships met, by type, then by ref: one met several times is read back once.
    const byType = new Map<string, Map<number, KuzuRel[]>>();
    const meet = {
      node: () => undefined,
      rel: (rel: KuzuRel) => {
        let refs = byType.get(rel._label);
        if (!refs) byType.set(rel._label, (refs = new Map()));
        const ref = internalKey(rel._id);
        const met = refs.get(ref);
        if (met) met.push(rel);
        else refs.set(ref, [rel]);
      },
    };
    // Inside maps too: their wire form names the edges, by their ends.
    for (const row of rows) for (const column of columns) eachKuzuItem(row[column], meet, true);
    if (byType.size === 0) return;
    if (!this.#knowsTablesOf(byType)) await this.#learnTableNumbers(conn);
    for (const [type, refs] of byType) {
      // Read from the source's side: the stored source is one of the two ends answered, whichever way. A scan of the
      // source table kept to those ends, then their edges (Kùzu's adjacency lists), is a fifth of the time of a scan
      // of every edge of the type for the offsets (1,197 edges of 1,000 2-hop paths, 1,000,000 edges: 95 ms, 400 ms).
      const ends = new Map<number, Set<number>>();
      for (const [rel] of refs.values()) {
        for (const end of [rel!._src, rel!._dst]) {
          let offsets = ends.get(end.table);
          if (!offsets) ends.set(end.table, (offsets = new Set()));
          offsets.add(end.offset);
        }
      }
      const offsets = [...new Set([...refs.values()].map(([rel]) => rel!._id.offset))];
      for (const [number, endOffsets] of ends) {
        const table = this.#tableByNumber.get(number);
        if (table === undefined) throw this.#noId(`number ${number}`);
        const stored = await rowsOf(
          conn,
          `MATCH (a:${quoteName(table)})-[r:${quoteName(type)}]->(b) WHERE offset(ID(a)) IN $sources AND offset(ID(r)) IN $offsets RETURN ID(r) AS r, ID(a) AS s, ID(b) AS d`,
          { sources: [...endOffsets], offsets },
        );
        for (const row of stored) {
          // An edge table of several FROM/TO pairs numbers each pair's edges apart: the same offset, another table.
          const ref = internalKey(row.r as unknown as InternalId);
          for (const rel of refs.get(ref) ?? []) {
            rel._src = row.s as unknown as InternalId;
            rel._dst = row.d as unknown as InternalId;
          }
          refs.delete(ref);
        }
      }
      // Read in the query's own transaction, so found; were one not, its ends would be the ones Kùzu swapped.
      if (refs.size > 0) throw new Error(`an edge of type ${JSON.stringify(type)} could not be read back to find its ends, so it can have no stable id: ask again`);
    }
  }

  /** Whether the table of every end of `byType`'s edges is known by its internal number. */
  #knowsTablesOf(byType: Map<string, Map<number, KuzuRel[]>>): boolean {
    for (const refs of byType.values()) for (const [rel] of refs.values()) if (!this.#tableByNumber.has(rel!._src.table) || !this.#tableByNumber.has(rel!._dst.table)) return false;
    return true;
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
        lastKey = this.nodeTables.get(node._label)?.primaryKey;
        if (lastKey === undefined) throw this.#noId(node._label);
        lastLabel = node._label;
        lastLabelIndex = nameOf(lastLabel);
      }
      refs.labels[index] = lastLabelIndex;
      refs.keys[index] = node[lastKey!];
      awaited--;
      return index;
    };
    // A row's nodes and edges (4 numbers each), gathered apart (filled up to a count: emptying an array by its
    // length is a slow path), then written after their counts. Inside a map nodes and edge ends are noted, as its
    // wire form names them, but the match is not theirs.
    const nodes: number[] = [];
    const edges: number[] = [];
    let nodeCount = 0;
    let edgeNumbers = 0;
    const meet = {
      node: (node: KuzuNode, inMap: boolean) => {
        const index = note(node);
        if (!inMap) nodes[nodeCount++] = index;
      },
      rel: (rel: KuzuRel, inMap: boolean) => {
        if (rel._label !== lastType) {
          const table = this.relTables.get(rel._label);
          if (table === undefined) throw this.#noId(rel._label);
          lastType = rel._label;
          lastTypeIndex = nameOf(lastType);
          lastTypeHasId = table.hasId;
        }
        const [source, target] = [indexOf(rel._src), indexOf(rel._dst)];
        if (inMap) return;
        const named = lastTypeHasId && rel.id !== null && rel.id !== undefined;
        edges[edgeNumbers++] = lastTypeIndex;
        edges[edgeNumbers++] = named ? refs.edgeIds.push(rel.id) - 1 : -1;
        edges[edgeNumbers++] = source;
        edges[edgeNumbers++] = target;
      },
    };
    for (const row of rows) {
      nodeCount = edgeNumbers = 0;
      for (const column of columns) eachKuzuItem(row[column], meet, true);
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
        // #resolve found every one (or failed).
        refs.keys[i] = found.get(refs.nodes[i]!)!;
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
    const meet = {
      node: (node: KuzuNode) => {
        if (!items.known.has(internalKey(node._id))) items.known.set(internalKey(node._id), this.#nodeId(node));
      },
      rel: (rel: KuzuRel) => {
        for (const end of [rel._src, rel._dst]) if (!items.known.has(internalKey(end))) missing.set(internalKey(end), end);
      },
    };
    for (const row of rows) for (const column of columns) eachKuzuItem(row[column], meet, false);
    for (const key of missing.keys()) if (items.known.has(key)) missing.delete(key);
    if (missing.size) await this.#resolve(conn, [...missing.values()], items.known);
    // As Subgraph.add: nodes, edges, paths and lists of them (not maps).
    const add = {
      node: (node: KuzuNode) => {
        const key = internalKey(node._id);
        if (!firstTime(items.added, key)) return;
        const id = items.known.get(key)!;
        if (!items.nodes.has(id)) items.nodes.set(id, graphNode(id, [node._label], this.#properties(node), items.readAt));
      },
      rel: (rel: KuzuRel) => {
        if (rel._id && !firstTime(items.added, internalKey(rel._id))) return;
        const [id, , source, target] = this.#edge(rel, false, items.known);
        if (!items.edges.has(id)) items.edges.set(id, graphEdge(id, rel._label, source, target, this.#properties(rel), items.readAt));
      },
    };
    for (const row of rows) {
      for (const column of columns) eachKuzuItem(row[column], add, false);
      if (items.size >= maxItems) return true;
    }
    return false;
  }

  /** Adds the stable ids of nodes met as edges' ends only to `known`, looked up per table; fails when one cannot be made. */
  async #resolve(conn: Connection, ids: InternalId[], known: Map<number, string>): Promise<void> {
    const byTable = new Map<number, number[]>();
    for (const id of ids) byTable.set(id.table, [...(byTable.get(id.table) ?? []), id.offset]);
    if ([...byTable.keys()].some((n) => !this.#tableByNumber.has(n))) await this.#learnTableNumbers(conn);
    for (const [number, offsets] of byTable) {
      const name = this.#tableByNumber.get(number);
      const table = name === undefined ? undefined : this.nodeTables.get(name);
      if (!table) throw this.#noId(name ?? `number ${number}`);
      const found = await rowsOf(
        conn,
        `MATCH (n:${quoteName(table.name)}) WHERE offset(id(n)) IN $offsets RETURN offset(id(n)) AS o, n.${quoteName(table.primaryKey)} AS k`,
        { offsets },
      );
      for (const row of found) known.set(internalKey({ table: number, offset: Number(row.o) }), nodeId(table.name, row.k));
      // Read in the query's own transaction, so found; were one not, its id would be its internal offset.
      if (offsets.some((offset) => !known.has(internalKey({ table: number, offset })))) {
        throw new Error(`an edge's end in table ${JSON.stringify(table.name)} could not be read back, so the edge can have no stable id: ask again`);
      }
    }
  }

  #nodeId(node: KuzuNode): string {
    const table = this.nodeTables.get(node._label);
    if (!table) throw this.#noId(node._label);
    return nodeId(node._label, node[table.primaryKey]);
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
    // Keyed by the data's own names (`__proto__` among them): no prototype.
    const map = byNames<WireValue>();
    for (const [k, v] of Object.entries(value)) map[k] = this.#wire(v, properties, known);
    return { m: map };
  }

  /** `known`: the ids already made of the batch's nodes, by ref (a node inside a property value is not among them). */
  #node(node: KuzuNode, properties: boolean, known: Map<number, string>): WireNode {
    const id = known.get(internalKey(node._id)) ?? this.#nodeId(node);
    return properties ? [id, node._label, this.#properties(node)] : [id, node._label];
  }

  #edgeId(rel: KuzuRel, source: string, target: string): string {
    const table = this.relTables.get(rel._label);
    if (!table) throw this.#noId(rel._label);
    return table.hasId && rel.id !== null && rel.id !== undefined ? edgeIdByProperty(rel._label, rel.id) : edgeIdByEnds(rel._label, source, target);
  }

  #edge(rel: KuzuRel, properties: boolean, known: Map<number, string>): WireEdge {
    const [source, target] = [endId(rel._src, known), endId(rel._dst, known)];
    const id = this.#edgeId(rel, source, target);
    return properties ? [id, rel._label, source, target, this.#properties(rel)] : [id, rel._label, source, target];
  }

  #properties(item: Record<string, unknown>): WireProperties {
    // Keyed by the table's property names (`__proto__` among them): no prototype.
    const properties: WireProperties = byNames();
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
  const id = known.get(internalKey(end));
  // Every end is among its batch's nodes or looked up (#resolve fails when one cannot be): never an internal offset.
  if (id === undefined) throw new Error('an edge’s end was not identified with its batch, so the edge can have no stable id');
  return id;
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

/** Empties `target` and fills it with `source`'s entries, with no wait between. */
function refill<K, V>(target: Map<K, V>, source: Map<K, V>): void {
  target.clear();
  for (const [key, value] of source) target.set(key, value);
}

/** Kùzu's message, without its kind (`Runtime exception: No database named R.` → `No database named R`). */
function engineMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^[\w ]+exception: /i, '').replace(/\.$/, '');
}

/** What to rename a table to: its name without the `.` Kùzu's catalogue reads as a database's. */
function renamedTable(name: string): string {
  return `ALTER TABLE ${quoteName(name)} RENAME TO ${quoteName(name.replaceAll('.', '_'))}`;
}

/** A table in the graph whose items can have no id: its name, why, and what to do. */
function unreadableTable(name: string, why: string): string {
  return `the table ${JSON.stringify(name)} cannot be read by Kùzu's catalogue (table_info: ${why}), so its nodes and edges can have no stable id: rename it (${renamedTable(name)}); Kùzu takes a name with "." for a table of another database`;
}

/** A write that made (or renamed to) a name the catalogue cannot read, refused and undone. */
function refusedTable(name: string, why: string, act: 'created' | 'renamed'): string {
  return `the table ${JSON.stringify(name)} was not ${act}: Kùzu's catalogue cannot read its name (table_info: ${why}), so its nodes and edges could have no stable id; give it a name without "." (Kùzu takes "R.x" for table x of a database R)`;
}
