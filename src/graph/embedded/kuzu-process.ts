/**
 * The embedded graph's process: Kùzu, opened on one folder, answering the service over IPC (kuzu-protocol.ts).
 *
 * Why a process of its own: Kùzu's query time-out does not stop every query (an `UNWIND range(1, 3e7)` ran 61 s
 * past a 200 ms time-out) and terminating a worker thread hung during a query, so the only stop that always holds
 * is to kill the process. The service does that when a query outlives its time-out (embedded-graph.ts), and starts
 * a new one; Kùzu's write-ahead log keeps the graph whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import kuzu, { type Connection, type KuzuValue, type QueryResult } from 'kuzu';
import { ANSWER_FD, frameHeader, type SubgraphFrame } from './answer-pipe.js';
import { Catalogue, ItemSet, nodeTableKeyParam, quoteName } from './kuzu-catalogue.js';
import { parseEdgeId, parseNodeId } from './kuzu-ids.js';
import type { ChildMessage, ErrorKind, ParentMessage, WireRow } from './kuzu-protocol.js';
import { checkPlan, isRecursive, QueryRefused, refuseCrashers } from './kuzu-plan.js';
import { oversizedRowMessage } from '../row-bytes.js';
import { nodeIdsByRef, type BatchRefs, type RowRefs } from './row-refs.js';
import { clearStatements, keepStatement, keptStatement } from './statement-cache.js';

// Kùzu's Node API builds its rows, nodes and maps by assignment (Napi::Object::Set): a column, property or key named
// `__proto__` set the object's prototype (the value lost, or taken for the row's own) instead of being one of its
// keys. Without Object.prototype's `__proto__` accessor (what Node's --disable-proto=delete does), the assignment
// makes an own key like any other; nothing in this process reads or sets a prototype through it.
delete (Object.prototype as { __proto__?: unknown }).__proto__;

const send = (message: ChildMessage) => process.send!(message);
// A subgraph's answer goes on the answer pipe (answer-pipe.ts). Its writes, like the IPC channel's, are not waited
// for; a write failing because the service is gone ends nothing here (the IPC channel's disconnect does).
const answers = new Socket({ fd: ANSWER_FD, readable: false, writable: true });
answers.on('error', () => undefined);
function sendFrame(frame: SubgraphFrame): void {
  answers.cork();
  answers.write(frameHeader(frame));
  answers.write(frame.nodes);
  answers.write(frame.edges);
  answers.uncork();
}

const [folder, bufferPoolBytes] = [process.argv[2]!, Number(process.argv[3])];

interface Run {
  conn: Connection;
  result: QueryResult;
  columns: string[];
  readOnly: boolean;
  maxRows: number;
  batchRows: number;
  properties: boolean;
  /** Its relationships' ends are read back from the stored ones (Catalogue.storedEnds): the query may be recursive. */
  storedEnds: boolean;
  sent: number;
}

let database: InstanceType<typeof kuzu.Database>;
const catalogue = new Catalogue();
const idle: Connection[] = [];
const runs = new Map<number, Run>();
/** Kùzu's worker threads (its default, the machine's cores), read at open: what a query is given when not told. */
let allThreads = 1;

/**
 * A batch ends early past BATCH_BYTES, so the service never holds much more than that of one query at once; a row
 * over MAX_ROW_BYTES fails the query (the service would have to hold it, and encode it again in its answer).
 */
const BATCH_BYTES = 4 * 1024 * 1024;
// Rows per catalogue pass of a subgraph: the ends of its edges are looked up together.
const SUBGRAPH_BATCH_ROWS = 500;

/**
 * A row's size, roughly (strings by length, every other scalar 8 bytes), to bound batches without encoding them:
 * row-bytes.ts's measure, with a property's scalar read in place (this one is on every row's path).
 */
function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 8;
  if (value === null || typeof value !== 'object') return 8;
  let total = 16;
  if (Array.isArray(value)) {
    for (const item of value) total += approximateBytes(item);
    return total;
  }
  for (const key in value) {
    // A property's scalar without a call: a fifth of the bound's time, which every row read pays.
    const item = (value as Record<string, unknown>)[key];
    total += key.length + (typeof item === 'string' ? item.length + 8 : item === null || typeof item !== 'object' ? 8 : approximateBytes(item));
  }
  return total;
}

/** A row over MAX_ROW_BYTES fails its query, in the words the Bolt adapter uses too (row-bytes.ts). */
function checkSize(size: number, rowNumber: number): void {
  const oversized = oversizedRowMessage(size, rowNumber);
  if (oversized) throw new Error(oversized);
}

function checkedRow(row: Record<string, KuzuValue>, rowNumber: number): Record<string, KuzuValue> {
  checkSize(approximateBytes(row), rowNumber);
  return row;
}

/**
 * A result's column names, read on this thread: the result holds them, and the asynchronous call was a trip to a
 * thread of the pool and back, with nothing to wait for (bench/README.md, "Graph").
 */
function columnsOf(result: QueryResult): string[] {
  return result.getColumnNamesSync();
}

/** A prepared statement is one statement, so one result. */
function single(result: QueryResult | QueryResult[]): QueryResult {
  return Array.isArray(result) ? result[0]! : result;
}

/**
 * The API's key for one of Kùzu's messages, by the whole of its own words: a message may quote the query (a parser
 * error does), so words of the query's ("timeout", "read only") must not decide.
 */
function classify(message: string): ErrorKind {
  if (/^(\w+ exception: )?Can not execute a write query inside a read-only transaction\.?$/i.test(message)) return 'write_forbidden';
  if (/^(\w+ exception: )?Interrupted\.?$/.test(message)) return 'graph_request_timeout';
  return 'bad_graph_request';
}

const OUT_OF_MEMORY = 'the query needed more memory than the embedded graph could get, and was stopped: return fewer or smaller values (a long list, a large range(), a large collect())';

function fail(id: number, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  const kind = err instanceof QueryRefused ? err.kind : classify(message);
  // Kùzu says only "Interrupted." (or "std::bad_alloc"): the alert's problem and the API's answer say what
  // happened, as the hard stop's and the memory cap's do.
  send({ t: 'failed', id, kind, message: kind === 'graph_request_timeout' ? 'the query ran past its time-out and was stopped' : /bad_alloc/.test(message) ? OUT_OF_MEMORY : message });
}

async function connection(): Promise<Connection> {
  const conn = idle.pop() ?? new kuzu.Connection(database);
  return conn;
}

async function release(conn: Connection, readOnly: boolean): Promise<void> {
  // A read-only run ends its transaction; a failed statement may already have ended it (Kùzu rolls back on error).
  if (readOnly) await conn.query('COMMIT').catch(() => undefined);
  idle.push(conn);
}

/** Starts a query on a connection of the pool: its result, or a failure (the connection given back). */
async function open(message: { query: string; params: Record<string, unknown>; readOnly: boolean; timeoutMs: number; threads?: number | undefined }): Promise<{ conn: Connection; result: QueryResult; recursive: boolean }> {
  const conn = await connection();
  try {
    conn.setQueryTimeout(message.timeoutMs);
    // Set at every run: a pooled connection keeps the last one's (src/sources/graph-share.ts says who gets how many).
    conn.setMaxNumThreadForExec(message.threads ?? allThreads);
    if (message.readOnly) await conn.query('BEGIN TRANSACTION READ ONLY');
    const params = message.params as Record<string, KuzuValue>;
    // One prepared statement: Kùzu refuses several statements in one prepare, where its plain query would run
    // them all (a write hidden after a read got through that way). Prepared first, so a query Kùzu cannot read is
    // answered with Kùzu's message about the query as written.
    const kept = message.readOnly ? keptStatement(conn, message.query) : undefined;
    let statement = kept?.statement;
    if (!statement) {
      refuseCrashers(message.query);
      statement = await conn.prepare(message.query);
      if (!statement.isSuccess()) throw new Error(statement.getErrorMessage());
    }
    // What the query does is Kùzu's own plan of it, on the allow-list (kuzu-plan.ts): no file, setting, extension
    // or other database, for anyone. A read-only run's statement is kept once its plan passed (statement-cache.ts),
    // with what the plan said of it, and a kept one run without parameters is not planned again; both go when the
    // tables change.
    const recursive = kept && Object.keys(params).length === 0 ? kept.recursive : isRecursive(await checkPlan(conn, message.query, params, message.readOnly));
    if (message.readOnly && !kept) keepStatement(conn, message.query, { statement, recursive });
    // A run that may write may change the tables: the statements kept go, before it runs (it may fail halfway) and
    // after (a read prepared meanwhile, on another connection, saw the old tables).
    if (!message.readOnly) clearStatements();
    const result = single(await conn.execute(statement, params));
    if (!message.readOnly) {
      clearStatements();
      // Its items' ids need the new catalogue too.
      await catalogue.load(conn).catch(() => undefined);
    }
    return { conn, result, recursive };
  } catch (err) {
    await release(conn, message.readOnly);
    throw withoutPaths(err);
  }
}

/**
 * A query's failure to reach a file (Kùzu binds LOAD FROM, COPY and EXPORT before the plan is checked, and the
 * operating system refuses the file: confinement.ts, or Kùzu cannot read one of the graph's own) is told without the
 * path, the file's content or the system's words: a query may not reach files at all, and the answer must not tell
 * which exist.
 */
function withoutPaths(err: unknown): unknown {
  const message = err instanceof Error ? err.message : String(err);
  // A file the process may read (its graph's own) fails as Kùzu sniffs it, quoting its first line: said the same way.
  if (!/^(IO|Copy) exception:/i.test(message)) return err;
  return new QueryRefused('bad_graph_request', 'this query reaches files (LOAD FROM, COPY, EXPORT or IMPORT DATABASE): queries here read the graph only (load files with `alert-webhooks graph load`)');
}

/** `open`, or the run's failure sent to the service (then undefined). */
async function openOrFail(message: Extract<ParentMessage, { t: 'run' | 'subgraph' }>): Promise<Awaited<ReturnType<typeof open>> | undefined> {
  try {
    return await open(message);
  } catch (err) {
    fail(message.id, err);
    return undefined;
  }
}

/**
 * `openOrFail`, where a write that made a table the catalogue cannot read (or renamed one to such a name) is undone
 * and refused, naming the table: its nodes and edges could have no id (docs/graph.md). Kùzu committed the write as
 * it ran (a write runs in a transaction of its own), so the table is dropped again, or renamed back.
 */
async function openChecked(message: Extract<ParentMessage, { t: 'run' | 'subgraph' }>): Promise<Awaited<ReturnType<typeof open>> | undefined> {
  const before = message.readOnly ? undefined : catalogue.tableNames();
  const opened = await openOrFail(message);
  if (!opened || !before) return opened;
  const refused = catalogue.unreadableSince(before);
  if (refused.length === 0) return opened;
  opened.result.close();
  for (const { undo } of refused) await opened.conn.query(undo).catch(() => undefined);
  clearStatements();
  await catalogue.load(opened.conn).catch(() => undefined);
  await release(opened.conn, false);
  fail(message.id, new QueryRefused('bad_graph_request', refused.map((table) => table.refusal).join('; ')));
  return undefined;
}

async function start(message: Extract<ParentMessage, { t: 'run' }>): Promise<void> {
  const opened = await openChecked(message);
  if (!opened) return;
  const { conn, result } = opened;
  try {
    const columns = columnsOf(result);
    runs.set(message.id, {
      conn, result, columns, readOnly: message.readOnly, maxRows: message.maxRows, batchRows: message.batchRows, properties: message.properties,
      storedEnds: opened.recursive, sent: 0,
    });
    send({ t: 'started', id: message.id, columns, readAt: Date.now() });
  } catch (err) {
    result.close();
    await release(conn, message.readOnly);
    fail(message.id, err);
  }
}

/**
 * A run for its distinct nodes and edges, answered at once as UTF-8 JSON (GraphSource.subgraph). Past `maxItems`,
 * a read-only run stops reading; a write reads on to `maxRows`, as a stream of its rows would have been read.
 */
async function subgraph(message: Extract<ParentMessage, { t: 'subgraph' }>): Promise<void> {
  const opened = await openChecked(message);
  if (!opened) return;
  const { conn, result } = opened;
  try {
    const columns = columnsOf(result);
    const storedEnds = opened.recursive;
    const items = new ItemSet(Date.now());
    let read = 0;
    let full = false;
    while (read < message.maxRows && result.hasNext() && !(full && message.readOnly)) {
      const rows: Record<string, KuzuValue>[] = [];
      while (rows.length < SUBGRAPH_BATCH_ROWS && read < message.maxRows && result.hasNext()) {
        const row = result.getNextSync()!;
        read++;
        if (!full) rows.push(checkedRow(row, read));
      }
      if (full) continue;
      if (storedEnds) await catalogue.storedEnds(conn, rows, columns);
      full = await catalogue.addRows(conn, rows, columns, items, message.maxItems);
    }
    const truncated = full || result.hasNext();
    const json = (values: Iterable<unknown>) => Buffer.from(JSON.stringify([...values]));
    sendFrame({ id: message.id, nodes: json(items.nodes.values()), edges: json(items.edges.values()), truncated });
  } catch (err) {
    fail(message.id, err);
  } finally {
    result.close();
    await release(conn, message.readOnly);
  }
}

/** Reads the run's next batch of up to `batchRows` rows; `done` when the run has no more to give. */
function readRows(run: Run, batchRows: number): { rows: Record<string, KuzuValue>[]; done: boolean; truncated: boolean } {
  const rows: Record<string, KuzuValue>[] = [];
  let bytes = 0;
  while (rows.length < batchRows && run.sent + rows.length < run.maxRows && run.result.hasNext() && bytes < BATCH_BYTES) {
    const row = run.result.getNextSync()!;
    const size = approximateBytes(row);
    checkSize(size, run.sent + rows.length + 1);
    bytes += size;
    rows.push(row);
  }
  run.sent += rows.length;
  const more = run.result.hasNext();
  const done = !more || run.sent >= run.maxRows;
  return { rows, done, truncated: done && more };
}

/** Reads the run's next batch of up to `batchRows` rows, as wire rows; `done` when the run has no more to give. */
async function readBatch(run: Run, batchRows: number): Promise<{ wire: WireRow[]; done: boolean; truncated: boolean }> {
  const { rows, done, truncated } = readRows(run, batchRows);
  if (run.storedEnds) await catalogue.storedEnds(run.conn, rows, run.columns);
  // Ids resolved for this batch only: kept for the whole run, they grew with its distinct nodes (memory that grew
  // with the number of matches); an edge whose ends are only in an earlier batch is looked up again instead.
  const wire = await catalogue.toWireRows(run.conn, rows, run.columns, run.properties);
  return { wire, done, truncated };
}

async function next(id: number): Promise<void> {
  const run = runs.get(id);
  if (!run) return;
  try {
    const { wire, done, truncated } = await readBatch(run, run.batchRows);
    send({ t: 'rows', id, rows: JSON.stringify(wire), done, truncated });
    // After the last batch is sent: its COMMIT (3-4 ms) is not the caller's wait.
    if (done) await finish(id);
  } catch (err) {
    await finish(id);
    fail(id, err);
  }
}

/**
 * Identified batches of a run (an alert run): numbered from 1, and each held here for its one `pick`, or until the
 * service says it picks none (`release`), at most until four more were read (the service asks for two batches
 * ahead of the one it picks from). Held as Kùzu gave the rows, with the ids made of the batch: a rerun picks none,
 * so its rows are never made wire rows. All dropped at `cancel`, which the service sends when it closes the run,
 * also after its last batch.
 */
const NO_ROWS: RowRefs = { rows: [], labels: [], keys: [], names: [], edgeIds: [] };
interface HeldBatch {
  rows: Record<string, KuzuValue>[];
  refs: BatchRefs;
}
const identified = new Map<number, { batches: number; columns: string[]; properties: boolean; held: Map<number, HeldBatch> }>();

/** A run's next identified batch, read before the service asked for it, or what reading it threw. */
type Identified = { rows: Record<string, KuzuValue>[]; refs: BatchRefs; done: boolean; truncated: boolean } | { error: unknown };
const readAhead = new Map<number, Identified>();

async function readIdentified(run: Run, batchRows: number): Promise<Identified> {
  try {
    const { rows, done, truncated } = readRows(run, batchRows);
    // Before the ids are made; the rows held for a pick keep the ends read back.
    if (run.storedEnds) await catalogue.storedEnds(run.conn, rows, run.columns);
    // Noted for this batch only: kept for the whole run, its nodes would grow with the number of matches; an edge
    // whose ends are only in an earlier batch is looked up again instead.
    return { rows, refs: await catalogue.batchRefs(run.conn, rows, run.columns), done, truncated };
  } catch (error) {
    return { error };
  }
}

async function identify(id: number, batchRows: number): Promise<void> {
  const run = runs.get(id);
  // Asked past its last batch (the service asks two ahead): answered, so the answers stay in the order asked.
  if (!run) {
    send({ t: 'identities', id, batch: 0, count: 0, refs: NO_ROWS, done: true, truncated: false });
    return;
  }
  const read = readAhead.get(id) ?? (await readIdentified(run, batchRows));
  readAhead.delete(id);
  if ('error' in read) {
    await finish(id);
    fail(id, read.error);
    return;
  }
  const { rows, refs, done, truncated } = read;
  let state = identified.get(id);
  if (!state) identified.set(id, (state = { batches: 0, columns: run.columns, properties: run.properties, held: new Map() }));
  const batch = ++state.batches;
  state.held.set(batch, { rows, refs });
  // The service may still pick from the batch three before this one: it asks two batches ahead of the one it
  // looks up, and picks from a batch while the next is looked up.
  state.held.delete(batch - 4);
  // The ids in numbers: the service makes their texts and the match keys (and hashes those it does not know
  // recorded) on its own thread while this one reads the next batch (row-refs.ts).
  // The refs without the nodes' internal ids, which only this process's picks use.
  const { nodes: _kept, ...sent } = refs;
  send({ t: 'identities', id, batch, count: rows.length, refs: sent, done, truncated });
  if (done) return finish(id);
  // The next batch is read now, not when its ask is handled: the process goes from one batch to the next without
  // a turn of its event loop between them (an ask's message is handled in the turn). Its failure waits for its ask.
  readAhead.set(id, await readIdentified(run, batchRows));
}

function pick(id: number, batch: number, positions: number[]): void {
  const state = identified.get(id);
  const held = state?.held.get(batch);
  if (!state || !held) return fail(id, new Error(`batch ${batch} of the run is no longer held`));
  if (positions.some((i) => !(i in held.rows))) return fail(id, new Error(`a position picked is not in batch ${batch}`));
  const rows = positions.map((i) => held.rows[i]!);
  // A batch is picked from once (IdentifiedBatch.rows).
  state.held.delete(batch);
  send({ t: 'rows', id, rows: JSON.stringify(catalogue.wireRows(rows, state.columns, state.properties, nodeIdsByRef(held.refs))), done: false, truncated: false });
}

async function finish(id: number): Promise<void> {
  readAhead.delete(id);
  const run = runs.get(id);
  if (!run) return;
  runs.delete(id);
  run.result.close();
  await release(run.conn, run.readOnly);
}

/** A node's or edge's lookup: one by its key is at once, one by a property not indexed scans its table. */
const LOOKUP_TIMEOUT_MS = 30_000;

async function lookup(message: Extract<ParentMessage, { t: 'node' | 'edge' }>): Promise<void> {
  const conn = await connection();
  try {
    // A pooled connection keeps the time-out and the threads its last query set, and a new one has none.
    conn.setQueryTimeout(LOOKUP_TIMEOUT_MS);
    // A lookup is an interactive query: one thread, as graph-share.ts gives each.
    conn.setMaxNumThreadForExec(1);
    await conn.query('BEGIN TRANSACTION READ ONLY');
    const found = message.t === 'node' ? await findNode(conn, message.nodeId) : await findEdge(conn, message.edgeId);
    const [row] = found ? await catalogue.toWireRows(conn, [found], ['item'], true) : [];
    send({ t: 'item', id: message.id, item: row?.[0] ?? null, readAt: Date.now() });
  } catch (err) {
    fail(message.id, err);
  } finally {
    await release(conn, true);
  }
}

async function first(conn: Connection, statement: string, params: Record<string, KuzuValue>): Promise<Record<string, KuzuValue> | undefined> {
  const prepared = await conn.prepare(statement);
  if (!prepared.isSuccess()) throw new Error(prepared.getErrorMessage());
  const result = single(await conn.execute(prepared, params));
  const row = result.hasNext() ? result.getNextSync() : null;
  result.close();
  return row ?? undefined;
}

async function findNode(conn: Connection, id: string): Promise<Record<string, KuzuValue> | undefined> {
  const parsed = parseNodeId(id);
  const table = parsed && catalogue.nodeTables.get(parsed.label);
  if (!parsed || !table) return undefined;
  const key = nodeTableKeyParam(table, parsed.key);
  if (key === undefined) return undefined;
  return first(conn, `MATCH (n:${quoteName(table.name)}) WHERE ${key.test('n')} RETURN n AS item`, { k: key.value });
}

async function findEdge(conn: Connection, id: string): Promise<Record<string, KuzuValue> | undefined> {
  const parsed = parseEdgeId(id);
  if (!parsed || !catalogue.relTables.has(parsed.type)) return undefined;
  const type = quoteName(parsed.type);
  if ('id' in parsed) {
    if (!catalogue.relTables.get(parsed.type)!.hasId) return undefined;
    return first(conn, `MATCH ()-[r:${type}]->() WHERE CAST(r.id AS STRING) = $k RETURN r AS item LIMIT 1`, { k: parsed.id });
  }
  const [from, to] = [catalogue.nodeTables.get(parsed.source.label), catalogue.nodeTables.get(parsed.target.label)];
  if (!from || !to) return undefined;
  const [s, d] = [nodeTableKeyParam(from, parsed.source.key), nodeTableKeyParam(to, parsed.target.key)];
  if (s === undefined || d === undefined) return undefined;
  return first(
    conn,
    `MATCH (a:${quoteName(from.name)})-[r:${type}]->(b:${quoteName(to.name)}) WHERE ${s.test('a', 's')} AND ${d.test('b', 'd')} RETURN r AS item LIMIT 1`,
    { s: s.value, d: d.value },
  );
}

async function load(message: Extract<ParentMessage, { t: 'load' }>): Promise<void> {
  const conn = await connection();
  const results: string[] = [];
  clearStatements();
  try {
    conn.setQueryTimeout(message.timeoutMs);
    conn.setMaxNumThreadForExec(allThreads);
    await conn.query('BEGIN TRANSACTION');
    for (const statement of message.statements) {
      const result = await conn.query(statement);
      const rows = await (Array.isArray(result) ? result[0]! : result).getAll();
      results.push(String(rows[0]?.result ?? ''));
    }
    // A table the catalogue cannot read fails the load, naming it, before it is committed (its items could have no id).
    await catalogue.load(conn, true);
    await conn.query('COMMIT');
    await catalogue.load(conn);
    send({ t: 'loaded', id: message.id, results });
  } catch (err) {
    // Kùzu rolls the transaction back when a statement in it fails; this ends it if it did not.
    await conn.query('ROLLBACK').catch(() => undefined);
    // The catalogue as committed (it was read inside the transaction).
    await catalogue.load(conn).catch(() => undefined);
    fail(message.id, err);
  } finally {
    idle.push(conn);
  }
}

const testHooks = process.argv[4] === 'test-hooks';

/** The test hook (kuzu-protocol.ts): what this process may read and write, as the operating system answers. */
function fileAccess(message: Extract<ParentMessage, { t: 'fileAccess' }>): void {
  if (!testHooks) return fail(message.id, new Error('this process has no test hook'));
  const attempt = (act: () => void) => {
    try {
      act();
      return 'ok';
    } catch (err) {
      return (err as NodeJS.ErrnoException).code ?? String(err);
    }
  };
  const read = attempt(() => readFileSync(message.path));
  const write = attempt(() => writeFileSync(path.join(message.dir, `written-by-kuzu-${process.pid}`), 'x'));
  send({ t: 'fileAccess', id: message.id, read, write, env: Object.keys(process.env) });
}

// Queries run side by side, each on its own connection; the messages of one query are handled in order, so a
// `next` never overtakes the `run` it follows.
const chains = new Map<number, Promise<void>>();
process.on('message', (message: ParentMessage) => {
  // Not behind the run's pending asks (each reads a batch): the rows go before the next scavenge can copy them.
  if (message.t === 'release') {
    identified.get(message.id)?.held.delete(message.batch);
    return;
  }
  const previous = chains.get(message.id) ?? Promise.resolve();
  const current = previous.then(() => {
    switch (message.t) {
      case 'run':
        return start(message);
      case 'subgraph':
        return subgraph(message);
      case 'next':
        return next(message.id);
      case 'identify':
        return identify(message.id, message.rows);
      case 'pick':
        return pick(message.id, message.batch, message.positions);
      case 'cancel':
        identified.delete(message.id);
        return finish(message.id);
      case 'node':
      case 'edge':
        return lookup(message);
      case 'load':
        return load(message);
      case 'fileAccess':
        return fileAccess(message);
    }
  });
  chains.set(message.id, current);
  void current.then(() => {
    if (chains.get(message.id) === current) chains.delete(message.id);
  });
});
process.on('disconnect', () => process.exit(0));

try {
  database = new kuzu.Database(folder, bufferPoolBytes);
  await database.init();
  const conn = await connection();
  const threads = await conn.query("CALL current_setting('threads') RETURN *");
  allThreads = Math.max(1, Number((await single(threads).getAll())[0]?.threads) || 1);
  await catalogue.load(conn);
  idle.push(conn);
  send({ t: 'opened' });
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  send({ t: 'openFailed', message, locked: /lock/i.test(message) });
  process.disconnect?.();
}
