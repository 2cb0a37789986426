/**
 * The embedded graph (Kùzu) as a GraphSource: Kùzu runs in a child process of its own (kuzu-process.ts), which this
 * side kills when a query outlives its time-out by HARD_STOP_GRACE_MS, and starts again at the next call.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { GraphError, type GraphSource, type IdentifiedBatch, type RowStream, type RunOptions, type SubgraphAnswer, type SubgraphOptions } from '../graph-source.js';
import type { GraphEdge, GraphNode } from '../graph-schemas.js';
import { EdgeValue, NodeValue, type GraphRow } from '../items.js';
import { checkQueryBounds } from '../query-bounds.js';
import { ANSWER_FD, readFrames } from './answer-pipe.js';
import { engineProcess, type EngineProcess } from './confinement.js';
import { matchKeysOf, type RowRefs } from './row-refs.js';
import { decodeWireRow, decodeWireValue, type ChildMessage, type ParentMessage, type WireRow } from './kuzu-protocol.js';

/**
 * Past its time-out, how long a query has to stop by itself before its process is killed (which ends every other
 * query of that graph too). Kùzu's own time-out stopped a join 0.6 s late on a busy machine; some queries it never stops.
 */
export const HARD_STOP_GRACE_MS = 5_000;
// Rows per message from the child: enough to make the IPC cost small per row, few enough to keep memory flat.
const BATCH_ROWS = 500;
const OPEN_TIMEOUT_MS = 60_000;
/**
 * What the Kùzu process may hold beyond its buffer pool before it is stopped. Kùzu builds a value outside the pool:
 * `RETURN range(1, 3000000)` alone took 1.7 GB there, so one query of any signed-in user could take the machine's
 * memory. Bench peaks stayed under 200 MB with a 256 MB pool.
 */
export const PROCESS_HEADROOM_BYTES = 768 * 1024 * 1024;
// How often the process's resident memory is read while it lives (a read of /proc is a few microseconds).
const MEMORY_CHECK_MS = 200;

export interface EmbeddedGraphOptions {
  /** The graph's folder (created when missing; Kùzu makes its files inside). */
  folder: string;
  /** Kùzu's buffer pool, in bytes (its default is most of the machine's memory). */
  bufferPoolBytes: number;
  /** Names the graph in messages: `data source "demo"`. */
  label: string;
  /** Past a query's time-out, how long before its process is killed: HARD_STOP_GRACE_MS by default. */
  hardStopGraceMs?: number;
  /** The most the process may hold (resident) before it is stopped; bufferPoolBytes + PROCESS_HEADROOM_BYTES by default. */
  processMemoryBytes?: number;
  /**
   * The most the process may keep (resident) with no query under way: past it, it is stopped and the next call starts
   * a new one. Halfway from the buffer pool to the cap by default.
   */
  idleMemoryBytes?: number;
  /** Files the process may read besides its folder (the CSV files of a `graph load`). */
  readablePaths?: readonly string[];
  /** Opens the process's test hook (fileAccess): tests only. */
  testHooks?: boolean;
}

interface Waiter {
  resolve(message: ChildMessage): void;
  reject(err: Error): void;
}

export class EmbeddedGraph implements GraphSource {
  readonly vendor = 'embedded' as const;
  readonly #options: EmbeddedGraphOptions;
  #child: ChildProcess | undefined;
  #opening: Promise<ChildProcess> | undefined;
  /**
   * The answers awaited, by request id: in the order asked, as the process answers one request's messages in order
   * (an alert run asks for its next batch before it picks rows of the one before, so two may be awaited at once).
   */
  readonly #waiters = new Map<number, Waiter[]>();
  #nextId = 1;
  #closed = false;
  #dying: Promise<void> | undefined;
  /** How many times a query had to be stopped by killing the process (past its time-out, or over the memory cap). */
  hardStops = 0;
  /** How many times the process was stopped idle, holding more than idleMemoryBytes. */
  idleRestarts = 0;
  /** Queries under way (a run until its stream is closed): the process is idle at 0. */
  #underWay = 0;

  constructor(options: EmbeddedGraphOptions) {
    this.#options = options;
  }

  /** Opens the graph now (it opens at the first call otherwise): fails when another process holds its folder. */
  async open(): Promise<void> {
    await this.#process();
  }

  async run(query: string, options: RunOptions): Promise<RowStream> {
    checkQueryBounds(query);
    const child = await this.#process();
    const id = this.#nextId++;
    const deadline = setTimeout(() => this.#hardStop(id), options.timeoutMs + (this.#options.hardStopGraceMs ?? HARD_STOP_GRACE_MS));
    // Under way until its stream is closed (once, however often close is called), or its start failed.
    let underWay = true;
    const ended = () => {
      if (underWay) this.#underWay--;
      underWay = false;
    };
    this.#underWay++;
    const started = await this.#request(child, id, {
      t: 'run', id, query, params: options.params ?? {}, readOnly: options.readOnly, timeoutMs: options.timeoutMs, maxRows: options.maxRows, batchRows: BATCH_ROWS,
      properties: options.properties ?? true, threads: options.threads,
    }).catch((err: unknown) => {
      clearTimeout(deadline);
      ended();
      throw err;
    });
    if (started.t !== 'started') {
      ended();
      throw new Error(`unexpected answer ${started.t}`);
    }
    return new EmbeddedRowStream(started.columns, started.readAt, {
      next: async () => {
        const answer = await this.#request(child, id, { t: 'next', id });
        if (answer.t !== 'rows') throw new Error(`unexpected answer ${answer.t}`);
        if (answer.done) clearTimeout(deadline);
        return answer;
      },
      identify: async (rows) => {
        const answer = await this.#request(child, id, { t: 'identify', id, rows });
        if (answer.t !== 'identities') throw new Error(`unexpected answer ${answer.t}`);
        if (answer.done) clearTimeout(deadline);
        return answer;
      },
      pick: async (batch, positions) => {
        const answer = await this.#request(child, id, { t: 'pick', id, batch, positions: [...positions] });
        if (answer.t !== 'rows') throw new Error(`unexpected answer ${answer.t}`);
        return answer.rows;
      },
      release: (batch) => {
        if (this.#child === child && child.connected) child.send({ t: 'release', id, batch } satisfies ParentMessage, ignoreSendFailure);
      },
      cancel: async () => {
        clearTimeout(deadline);
        ended();
        if (this.#child === child && child.connected) child.send({ t: 'cancel', id } satisfies ParentMessage, ignoreSendFailure);
      },
    }, options.signal);
  }

  /** Made in the Kùzu process, which converts each distinct item once and hands over the answer's UTF-8 JSON. */
  async subgraph(query: string, options: SubgraphOptions): Promise<SubgraphAnswer> {
    checkQueryBounds(query);
    const child = await this.#process();
    const id = this.#nextId++;
    const deadline = setTimeout(() => this.#hardStop(id), options.timeoutMs + (this.#options.hardStopGraceMs ?? HARD_STOP_GRACE_MS));
    try {
      const answer = await this.#counted(child, id, {
        t: 'subgraph', id, query, params: options.params ?? {}, readOnly: options.readOnly, timeoutMs: options.timeoutMs, maxRows: options.maxRows, maxItems: options.maxItems, threads: options.threads,
      });
      if (answer.t !== 'subgraph') throw new Error(`unexpected answer ${answer.t}`);
      return { nodes: answer.nodes, edges: answer.edges, truncated: answer.truncated };
    } finally {
      clearTimeout(deadline);
    }
  }

  async node(id: string): Promise<GraphNode | undefined> {
    const child = await this.#process();
    const requestId = this.#nextId++;
    const answer = await this.#counted(child, requestId, { t: 'node', id: requestId, nodeId: id });
    const value = answer.t === 'item' ? decodeWireValue(answer.item, answer.readAt) : undefined;
    return value instanceof NodeValue ? value.node : undefined;
  }

  async edge(id: string): Promise<GraphEdge | undefined> {
    const child = await this.#process();
    const requestId = this.#nextId++;
    const answer = await this.#counted(child, requestId, { t: 'edge', id: requestId, edgeId: id });
    const value = answer.t === 'item' ? decodeWireValue(answer.item, answer.readAt) : undefined;
    return value instanceof EdgeValue ? value.edge : undefined;
  }

  /** The test hook (EmbeddedGraphOptions.testHooks): reads `file` and writes a file in `dir` from inside the process. */
  async fileAccess(file: string, dir: string): Promise<{ read: string; write: string; env: string[] }> {
    const child = await this.#process();
    const id = this.#nextId++;
    const answer = await this.#counted(child, id, { t: 'fileAccess', id, path: file, dir });
    if (answer.t !== 'fileAccess') throw new Error(`unexpected answer ${answer.t}`);
    return { read: answer.read, write: answer.write, env: answer.env };
  }

  async verify(): Promise<void> {
    await this.open();
    await this.ping(10_000);
  }

  async ping(timeoutMs: number): Promise<void> {
    const stream = await this.run('RETURN 1 AS ok', { timeoutMs, maxRows: 1, readOnly: true });
    for await (const _ of stream) break;
    await stream.close();
  }

  /** Runs `statements` in one transaction (the bulk loader): all take effect, or none. Answers Kùzu's messages. */
  async load(statements: string[], timeoutMs: number): Promise<string[]> {
    const child = await this.#process();
    const id = this.#nextId++;
    const answer = await this.#counted(child, id, { t: 'load', id, statements, timeoutMs });
    if (answer.t !== 'loaded') throw new Error(`unexpected answer ${answer.t}`);
    return answer.results;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child ?? (await this.#opening?.catch(() => undefined));
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    await letGo(child);
  }

  /** A request answered in one message (a subgraph, a node, an edge, a load), counted as under way until it is. */
  async #counted(child: ChildProcess, id: number, message: ParentMessage): Promise<ChildMessage> {
    this.#underWay++;
    try {
      return await this.#request(child, id, message);
    } finally {
      this.#underWay--;
    }
  }

  #request(child: ChildProcess, id: number, message: ParentMessage): Promise<ChildMessage> {
    return new Promise<ChildMessage>((resolve, reject) => {
      if (!child.connected) return reject(this.#unavailable('its process stopped'));
      const waiting = this.#waiters.get(id) ?? [];
      this.#waiters.set(id, waiting);
      waiting.push({
        resolve: (answer) => {
          if (answer.t === 'failed') reject(new GraphError(answer.kind, answer.message));
          else resolve(answer);
        },
        reject,
      });
      // A process that died a moment ago may still look connected: the send then fails (EPIPE). Given a callback,
      // Node hands the failure to it; without one it emits 'error' on the child, which nothing would catch.
      child.send(message, (err) => {
        if (!err) return;
        this.#reject(this.#unavailable('its process stopped'), id);
        // Gone, though its exit is not seen yet: the next call waits for that exit and starts a new process.
        if (this.#child === child) this.#kill(child, false);
      });
    });
  }

  /** A query outlived its time-out and the grace after it: the process is killed, and started again when next needed. */
  #hardStop(id: number): void {
    const child = this.#child;
    if (!child) return;
    this.#reject(new GraphError('graph_request_timeout', 'the query ran past its time-out and was stopped'), id);
    this.#kill(child);
  }

  /** Fails the answers awaited: every request's, or request `id`'s only. */
  #reject(why: Error, id?: number): void {
    const failing = id === undefined ? [...this.#waiters.values()] : [this.#waiters.get(id) ?? []];
    if (id === undefined) this.#waiters.clear();
    else this.#waiters.delete(id);
    for (const waiting of failing) for (const waiter of waiting) waiter.reject(why);
  }

  /** Lets an idle process go (letGo); the next call starts a new one once it is gone. */
  #retire(child: ChildProcess): void {
    this.#child = undefined;
    this.#dying = letGo(child);
  }

  /**
   * Kills the process now (a hard stop, counted, unless it is dead already). The next call starts a new one, once this
   * one is gone and has let go of the folder's lock.
   */
  #kill(child: ChildProcess, hardStop = true): void {
    if (hardStop) this.hardStops++;
    this.#child = undefined;
    this.#dying = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    child.kill('SIGKILL');
  }

  #unavailable(why: string): GraphError {
    return new GraphError('data_source_unavailable', `the embedded graph of ${this.#options.label} is unavailable: ${why}`);
  }

  #process(): Promise<ChildProcess> {
    if (this.#closed) return Promise.reject(this.#unavailable('it was closed'));
    if (this.#child?.connected) return Promise.resolve(this.#child);
    this.#opening ??= this.#start().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #start(): Promise<ChildProcess> {
    const { folder, bufferPoolBytes } = this.#options;
    await this.#dying;
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const entry = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './kuzu-process.ts' : './kuzu-process.js', import.meta.url));
    const args = [path.join(folder, 'graph'), String(bufferPoolBytes), ...(this.#options.testHooks ? ['test-hooks'] : [])];
    // Confined by the operating system where it can be (confinement.ts): no environment of this process's, its
    // folder as its working directory, and under Landlock nothing of the machine's files but its folder and code.
    let engine: EngineProcess;
    try {
      engine = engineProcess(folder, entry, args, this.#options.readablePaths);
    } catch (err) {
      throw this.#unavailable(err instanceof Error ? err.message : String(err));
    }
    const child = fork(engine.modulePath, engine.args, {
      serialization: 'advanced', execArgv: engine.execArgv, env: engine.env, cwd: engine.cwd, stdio: ['ignore', 'ignore', 'pipe', 'ipc', 'pipe'],
    });
    // Its death is told by 'exit' (every waiter fails there); an error on the process or its pipes (a write to one
    // that just died) must not be an unhandled 'error' event, which would stop this process too.
    child.on('error', () => undefined);
    child.stdio[ANSWER_FD]?.on('error', () => undefined);
    child.stderr?.on('error', () => undefined);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2_000);
    });
    const opened = await new Promise<ChildMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.#unavailable(`it did not open within ${OPEN_TIMEOUT_MS / 1000} s`)), OPEN_TIMEOUT_MS);
      child.once('message', (message: ChildMessage) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(this.#unavailable(`its process exited with code ${code} while opening${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`));
      });
    }).catch((err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
    if (opened.t === 'openFailed') {
      child.kill('SIGKILL');
      throw this.#unavailable(
        opened.locked
          ? 'another process holds its files (an embedded graph is opened by one process: stop the other one, or run every role in one process)'
          : opened.message,
      );
    }
    const answer = (message: ChildMessage) => {
      if (!('id' in message)) return;
      const waiting = this.#waiters.get(message.id);
      const waiter = waiting?.shift();
      if (!waiter) return;
      if (waiting!.length === 0) this.#waiters.delete(message.id);
      waiter.resolve(message);
    };
    child.on('message', answer);
    // A frame of a child that is no longer this graph's (hard-stopped) finds no waiter: its queries failed already.
    readFrames(child.stdio[ANSWER_FD] as Readable, (frame) => answer({ t: 'subgraph', ...frame }));
    child.once('exit', () => {
      if (this.#child === child) this.#child = undefined;
      this.#reject(this.#unavailable('its process stopped (a query ran past its time-out, or it crashed); it starts again at the next call'));
    });
    this.#watchMemory(child);
    this.#child = child;
    return child;
  }

  /**
   * Stops the process when it holds more than its cap: every query it was running fails with a sentence saying why,
   * and the next call starts a new one (as after a time-out). Linux only: elsewhere /proc is missing and nothing is watched.
   */
  #watchMemory(child: ChildProcess): void {
    const { bufferPoolBytes } = this.#options;
    const cap = this.#options.processMemoryBytes ?? bufferPoolBytes + PROCESS_HEADROOM_BYTES;
    const idleCap = this.#options.idleMemoryBytes ?? bufferPoolBytes + (cap - bufferPoolBytes) / 2;
    const timer = setInterval(() => {
      const held = residentBytes(child.pid);
      if (held === undefined) return;
      // Kùzu keeps what a large query took (an UNWIND of a million values left it at 770 MB, idle), and the next
      // query would be stopped at the cap for memory it did not take: an idle process over idleCap is let go.
      if (held > idleCap && held <= cap && this.#underWay === 0 && this.#child === child) {
        clearInterval(timer);
        this.idleRestarts++;
        this.#retire(child);
        return;
      }
      if (held <= cap) return;
      clearInterval(timer);
      if (this.#child !== child) return;
      const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
      this.#reject(
        new GraphError(
          'bad_graph_request',
          `the query needed more memory than the embedded graph may hold (${mb(held)} MB, over its ${mb(cap)} MB) and was stopped: return fewer or smaller values (a long list, a large collect())`,
        ),
      );
      this.#kill(child);
    }, MEMORY_CHECK_MS);
    timer.unref();
    child.once('exit', () => clearInterval(timer));
  }
}

/** A message the process no longer needs (a release, a cancel): one that cannot be sent because it died is moot. */
function ignoreSendFailure(): void {}

/** Disconnects the process, which lets it close Kùzu and exit; one that has not within 5 s is killed. Answers once it is gone. */
function letGo(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  return exited.finally(() => clearTimeout(timer));
}

/** The resident memory of process `pid`, from /proc (undefined where there is none). */
function residentBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

interface Batches {
  /** The next batch: `rows` is the JSON text of its WireRow[]. */
  next(): Promise<{ rows: string; done: boolean; truncated: boolean }>;
  /** The next batch of up to `rows` rows, by the ids of their nodes and edges (row-refs.ts); the process holds its rows. */
  identify(rows: number): Promise<{ batch: number; count: number; refs: RowRefs; done: boolean; truncated: boolean }>;
  /** The JSON text of the WireRow[] at `positions` of identified batch `batch`. */
  pick(batch: number, positions: readonly number[]): Promise<string>;
  /** Identified batch `batch` is not picked from: the process lets its rows go now. */
  release(batch: number): void;
  cancel(): Promise<void>;
}

class EmbeddedRowStream implements RowStream {
  truncated = false;
  /** The Kùzu process made the answer as the query started. */
  readonly madeAsRead = false;
  #done = false;
  readonly #readAt: number;
  readonly #batches: Batches;

  constructor(
    readonly columns: readonly string[],
    readAt: number,
    batches: Batches,
    signal?: AbortSignal,
  ) {
    this.#readAt = readAt;
    this.#batches = batches;
    signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<GraphRow> {
    try {
      let coming = this.#done ? undefined : this.#batches.next();
      while (coming) {
        const batch = await coming;
        if (batch.done) {
          this.#done = true;
          this.truncated = batch.truncated;
        }
        // The next batch is asked for before this one's rows are used: the Kùzu process reads it meanwhile.
        coming = this.#done ? undefined : this.#batches.next();
        // Its failure is the loop's to throw, when it gets there (or nobody's, once the reader stopped early).
        coming?.catch(() => undefined);
        for (const row of JSON.parse(batch.rows) as WireRow[]) yield decodeWireRow(row, this.columns, this.#readAt);
      }
    } finally {
      await this.close();
    }
  }

  /**
   * The rows by their match keys: the Kùzu process sends what a batch's keys are made of, and a row only when `rows`
   * asks for it. Two batches are asked for ahead, so the process reads the next one while the caller looks this one's
   * keys up, and the one after is already asked for when it is done: it does not wait for the service's ask
   * between two batches. The process holds the last four.
   */
  async *identified(batchRows: number): AsyncIterable<IdentifiedBatch> {
    const ask = () => {
      const asking = this.#batches.identify(batchRows);
      // Its failure is the loop's to throw, when it gets there (or nobody's, once the reader stopped early).
      asking.catch(() => undefined);
      return asking;
    };
    // Not closed here, whether its batches ended or the caller stopped early: the caller may still pick from the
    // last ones, and closes the stream once it did (closing drops them in the process).
    const asked = this.#done ? [] : [ask(), ask()];
    while (asked.length) {
      const batch = await asked.shift()!;
      if (batch.done) {
        this.#done = true;
        this.truncated = batch.truncated;
        // What was asked past the last batch is answered empty by the process, and not read.
        asked.length = 0;
      } else asked.push(ask());
      const keys = matchKeysOf(batch.refs);
      if (keys.length !== batch.count) throw new Error(`a batch of ${batch.count} rows came with ${keys.length} match keys`);
      yield {
        keys,
        rows: async (positions) => {
          if (positions.length === 0) {
            // Held no longer than needed (none are, in an unchanged rerun): rows let go young cost the process's
            // garbage collector little, where four batches held were copied by every scavenge on their way out.
            this.#batches.release(batch.batch);
            return [];
          }
          const rows = JSON.parse(await this.#batches.pick(batch.batch, positions)) as WireRow[];
          return rows.map((row) => decodeWireRow(row, this.columns, this.#readAt));
        },
      };
    }
  }

  async close(): Promise<void> {
    if (this.#done) return this.#batches.cancel();
    this.#done = true;
    await this.#batches.cancel();
  }
}
