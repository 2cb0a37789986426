/**
 * Neo4j and Memgraph over Bolt (neo4j-driver) as a GraphSource. The time-out is the server's transaction time-out,
 * with the client closing the session shortly after as a backstop.
 *
 * Before every run, read-only or not, the server plans the query (`EXPLAIN`, with the run's parameters, in a
 * transaction of the run's own access mode that is rolled back) and bolt-plan.ts reads that plan against the lists
 * of query-allow-list.ts: an operator, procedure or function not listed refuses the query (`bad_graph_request`),
 * and so does a query the server cannot plan, with the server's message. Nothing decides by reading the query's
 * text: Neo4j's lexer ends a `//` comment at CR and takes U+001C as a space, which a second reader gets wrong.
 *
 * Read-only runs hold three ways: they run in a READ transaction, that transaction is never committed (always
 * rolled back, whatever the query did), and a write is refused with `write_forbidden`: before the run, by the
 * plan's write operators (and on Neo4j its query type); on Memgraph also at the run's end by its own query type
 * and counters, its rows having been read in a transaction that is then rolled back.
 * A run that may write is committed when its rows have all been read (the rest read and dropped past `maxRows`).
 */
import neo4j, { type Driver, type Session } from 'neo4j-driver';
import { GraphError, subgraphOfRows, type GraphSource, type IdentifiedBatch, type RowStream, type RunOptions, type SubgraphAnswer, type SubgraphOptions } from '../graph-source.js';
import type { GraphEdge, GraphNode } from '../graph-schemas.js';
import { byNames, type GraphRow } from '../items.js';
import { identifiedRows } from '../row-identity.js';
import { checkQueryBounds } from '../query-bounds.js';
import { approximateBytes, oversizedRowMessage } from '../row-bytes.js';
import { explainRefusal, MEMGRAPH_PLAN_COLUMN, planKind, type ExplainAnswer } from './bolt-plan.js';
import { boltEdge, boltNode, boltValue } from './bolt-values.js';
import { guardedGraphCall, type GraphConnectionGuard } from './bolt-network.js';
import { DEFAULT_RECEIVER_POLICY, type ReceiverPolicy } from '../../network/receiver-policy.js';
import type { AddressResolver } from '../../network/guarded-connector.js';
import type { Logger } from '../../logger.js';

export interface BoltGraphOptions {
  url: string;
  user: string;
  password: string;
  /** The database to use; the server's default when unset. */
  database?: string | undefined;
  /** Names the graph in messages: `data source "fraud"`. */
  label: string;
  /** Where its connections may go (RECEIVER_POLICY, RECEIVER_DENY, RECEIVER_ALLOW): the default policy when unset. */
  policy?: ReceiverPolicy | undefined;
  /** Where host names are resolved; dns.lookup unless a test maps a name of its own. */
  resolve?: AddressResolver | undefined;
  /** Where the reason a graph cannot be reached is written (the API's answer does not tell it). */
  logger?: Logger | undefined;
}

// The reason a graph cannot be reached is logged once per this long (or when it changes): health checks ask every scrape.
const UNREACHABLE_LOG_MS = 60_000;

const CONNECT_TIMEOUT_MS = 10_000;
const BACKSTOP_MS = 2_000;

export class BoltGraph implements GraphSource {
  readonly vendor = 'neo4j' as const;
  readonly #driver: Driver;
  readonly #options: BoltGraphOptions;
  readonly #guard: GraphConnectionGuard;
  #lastUnreachable: { reason: string; at: number } | undefined;

  constructor(options: BoltGraphOptions) {
    this.#options = options;
    this.#guard = { policy: options.policy ?? DEFAULT_RECEIVER_POLICY, resolve: options.resolve };
    this.#driver = neo4j.driver(options.url, neo4j.auth.basic(options.user, options.password), {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      connectionAcquisitionTimeout: CONNECT_TIMEOUT_MS,
      maxConnectionPoolSize: 16,
      disableLosslessIntegers: false,
      // The driver's own log would print connection errors on its own; the service logs what matters.
      logging: { level: 'error', logger: () => undefined },
    });
  }

  /** Checks that the server answers, the credentials open it and the database exists; throws a GraphError naming which. */
  verify(): Promise<void> {
    return guardedGraphCall(this.#guard, () => this.#verify());
  }

  async #verify(): Promise<void> {
    try {
      await this.#driver.verifyConnectivity(this.#options.database ? { database: this.#options.database } : undefined);
      await this.#ping(CONNECT_TIMEOUT_MS);
    } catch (err) {
      throw this.#error(err);
    }
  }

  /** Every driver call runs in the connection guard (bolt-network.ts): its connections go only where the policy allows. */
  run(query: string, options: RunOptions): Promise<RowStream> {
    return guardedGraphCall(this.#guard, () => this.#run(query, options));
  }

  async #run(query: string, options: RunOptions): Promise<RowStream> {
    checkQueryBounds(query);
    const session = this.#session(options.readOnly);
    const params = options.params ?? {};
    try {
      const planned = await this.#refuseByPlan(session, query, params, options);
      const tx = await session.beginTransaction({ timeout: options.timeoutMs });
      const result = tx.run(query, params);
      const keys = await result.keys();
      // Memgraph's plan may not show a write a procedure or module makes: its run's own account decides too.
      const checkAtEnd = options.readOnly && planned === 'memgraph';
      return new BoltRowStream(keys, result, session, tx, { ...options, checkAtEnd }, (err) => this.#error(err));
    } catch (err) {
      await session.close().catch(() => undefined);
      throw this.#error(err);
    }
  }

  async subgraph(query: string, options: SubgraphOptions): Promise<SubgraphAnswer> {
    // run() checks the query's bounds.
    return subgraphOfRows(await this.run(query, options), options.maxItems);
  }

  async node(id: string): Promise<GraphNode | undefined> {
    const [row] = await this.#lookup('MATCH (n) WHERE elementId(n) = $id RETURN n', id);
    return row ? boltNode(row.get('n'), Date.now()) : undefined;
  }

  async edge(id: string): Promise<GraphEdge | undefined> {
    const [row] = await this.#lookup('MATCH ()-[r]->() WHERE elementId(r) = $id RETURN r', id);
    return row ? boltEdge(row.get('r'), Date.now()) : undefined;
  }

  ping(timeoutMs: number): Promise<void> {
    return guardedGraphCall(this.#guard, () => this.#ping(timeoutMs));
  }

  async #ping(timeoutMs: number): Promise<void> {
    const session = this.#session(true);
    try {
      await session.run('RETURN 1', {}, { timeout: timeoutMs });
    } catch (err) {
      throw this.#error(err);
    } finally {
      await session.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.#driver.close();
  }

  async #lookup(query: string, id: string) {
    const session = this.#session(true);
    try {
      return (await guardedGraphCall(this.#guard, () => session.executeRead((tx) => tx.run(query, { id }), { timeout: CONNECT_TIMEOUT_MS }))).records;
    } catch (err) {
      throw this.#error(err);
    } finally {
      await session.close().catch(() => undefined);
    }
  }

  #session(readOnly: boolean): Session {
    return this.#driver.session({
      defaultAccessMode: readOnly ? neo4j.session.READ : neo4j.session.WRITE,
      ...(this.#options.database ? { database: this.#options.database } : {}),
    });
  }

  /**
   * Asks the server's planner what the query does, in a transaction of the run's access mode that is always rolled
   * back, and throws the refusal of its plan (bolt-plan.ts). A query the server cannot plan throws the server's
   * error (a syntax error or an unknown procedure is `bad_graph_request` with its message). Answers which server
   * planned it.
   */
  async #refuseByPlan(session: Session, query: string, params: Record<string, unknown>, options: RunOptions): Promise<'neo4j' | 'memgraph' | undefined> {
    const tx = await session.beginTransaction({ timeout: options.timeoutMs });
    try {
      const { records, summary } = await tx.run(`EXPLAIN ${query}`, params);
      const keys = records[0]?.keys ?? [];
      const answer: ExplainAnswer = {
        summary,
        keys: keys.map(String),
        firstColumn: keys[0] === MEMGRAPH_PLAN_COLUMN ? records.map((record) => record.get(MEMGRAPH_PLAN_COLUMN)) : [],
      };
      const refusal = explainRefusal(answer, { readOnly: options.readOnly });
      if (refusal) throw refusal;
      return planKind(answer);
    } finally {
      await tx.rollback().catch(() => undefined);
    }
  }

  #error(err: unknown): GraphError {
    if (err instanceof GraphError) return err;
    return boltError(err, this.#options.label, (reason) => this.#logUnreachable(reason));
  }

  #logUnreachable(reason: string): void {
    const last = this.#lastUnreachable;
    const now = Date.now();
    if (last && last.reason === reason && now - last.at < UNREACHABLE_LOG_MS) return;
    this.#lastUnreachable = { reason, at: now };
    this.#options.logger?.warn({ graph: this.#options.label, url: this.#options.url, reason }, 'graph cannot be reached');
  }
}

/** What every failure to reach a Bolt server answers, whatever it was: the reason is logged (`unreachable`), never answered. */
export function unreachableMessage(label: string): string {
  return `the graph of ${label} is unreachable: no Bolt server answered at its URL, or the receiver policy does not allow its address (the service's log says which)`;
}

/**
 * A driver error as the API names it: the server's code decides; the message says what to check. An error that is
 * not a server's answer (no `Neo.` or `Memgraph.` code: a refused or silent port, another protocol, a name that does
 * not resolve, an address the policy refuses) answers one message, unreachableMessage, and hands its reason to
 * `unreachable` for the log: told apart in the answer, they made the service a scanner of its network.
 */
export function boltError(err: unknown, label: string, unreachable?: (reason: string) => void): GraphError {
  const code = (err as { code?: string }).code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (!code.startsWith('Neo.') && !code.startsWith('Memgraph.')) {
    unreachable?.(message);
    return new GraphError('data_source_unavailable', unreachableMessage(label));
  }
  if (code === 'Neo.ClientError.Security.Forbidden') {
    // The graph's user may not do this: a write by a user with a reader role, or a database it may not use.
    if (/write/i.test(message)) return new GraphError('write_forbidden', `the graph's user may not write: ${message}`);
    return new GraphError('data_source_unavailable', `the graph of ${label} refused access: ${message}`);
  }
  if (code.startsWith('Neo.ClientError.Security.')) return new GraphError('data_source_unavailable', `the graph of ${label} refused the credentials: authentication failed`);
  if (code === 'Neo.ClientError.Database.DatabaseNotFound') return new GraphError('data_source_unavailable', `the graph of ${label} has no such database: ${message}`);
  if (code.includes('TransactionTimedOut') || code.includes('TransactionTimedOutClientConfiguration') || /timed? ?out/i.test(message)) {
    return new GraphError('graph_request_timeout', 'the query ran past its time-out and was stopped');
  }
  if (code === 'Neo.ClientError.Statement.AccessMode' || /read access mode|read-only/i.test(message)) {
    return new GraphError('write_forbidden', `this query writes: only read queries may run here (${message})`);
  }
  // Memgraph names its client errors (a syntax error, an unknown function) Memgraph.ClientError.*.
  if (code.startsWith('Neo.ClientError.') || code.startsWith('Memgraph.ClientError.')) return new GraphError('bad_graph_request', message);
  return new GraphError('data_source_unavailable', `the graph of ${label} failed: ${message}`);
}

/**
 * A record as a row, or `bad_graph_request` naming it when it holds more than MAX_ROW_BYTES: the embedded engine's
 * bound (row-bytes.ts), so a row one engine refuses the other refuses too, before the service holds many of them.
 * `rowNumber` counts from 1.
 */
export function boltRow(record: { get(key: string): unknown }, columns: readonly string[], rowNumber: number, readAt: number, properties: boolean): GraphRow {
  const values = columns.map((key) => record.get(key));
  const tooLarge = oversizedRowMessage(approximateBytes(values), rowNumber);
  if (tooLarge) throw new GraphError('bad_graph_request', tooLarge);
  // By the query's column names, `__proto__` among them: no prototype.
  const row: GraphRow = byNames();
  columns.forEach((key, i) => (row[key] = boltValue(values[i], readAt, properties)));
  return row;
}

type BoltTransaction = Awaited<ReturnType<Session['beginTransaction']>>;
type BoltResult = ReturnType<BoltTransaction['run']>;

type StreamOptions = RunOptions & { checkAtEnd: boolean };

class BoltRowStream implements RowStream {
  truncated = false;
  /** The server works its answer out as the rows are read. */
  readonly madeAsRead = true;
  #closed = false;
  #committed = false;
  #timedOut = false;
  readonly #backstop: NodeJS.Timeout;

  constructor(
    readonly columns: readonly string[],
    private readonly result: BoltResult,
    private readonly session: Session,
    private readonly tx: BoltTransaction,
    private readonly options: StreamOptions,
    private readonly mapError: (err: unknown) => GraphError,
  ) {
    // The server stops the transaction at its time-out; a server that does not is left behind shortly after.
    this.#backstop = setTimeout(() => {
      this.#timedOut = true;
      void this.close();
    }, options.timeoutMs + BACKSTOP_MS);
    options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<GraphRow> {
    const readAt = Date.now();
    let read = 0;
    try {
      for await (const record of this.result) {
        if (this.#closed) break;
        if (read >= this.options.maxRows) {
          this.truncated = true;
          // A read stops here (its transaction is rolled back); a write runs to its end before it is committed.
          if (this.options.readOnly) break;
          continue;
        }
        read++;
        yield boltRow(record, this.columns, read, readAt, this.options.properties ?? true);
      }
      if (this.#timedOut) throw new GraphError('graph_request_timeout', 'the query ran past its time-out and was stopped');
      if (this.#closed) return;
      if (this.options.checkAtEnd && !this.truncated) await this.#refuseIfWrote();
      if (!this.options.readOnly) {
        await this.tx.commit();
        this.#committed = true;
      }
    } catch (err) {
      if (this.#timedOut) throw new GraphError('graph_request_timeout', 'the query ran past its time-out and was stopped');
      throw this.mapError(err);
    } finally {
      await this.close();
    }
  }

  /** The server hands over rows only: their batches are made of the rows read (row-identity.ts). */
  identified(batchRows: number): AsyncIterable<IdentifiedBatch> {
    return identifiedRows(this, batchRows);
  }

  /** The server's own account of the run (Memgraph): anything but a read is refused, and is rolled back by close(). */
  async #refuseIfWrote(): Promise<void> {
    const summary = await this.result.summary();
    if (summary.queryType !== 'r' || summary.counters.containsUpdates() || summary.counters.containsSystemUpdates()) {
      throw new GraphError('write_forbidden', `this query writes (query type "${summary.queryType}"): only read queries may run here; nothing was written`);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#backstop);
    if (!this.#committed) await this.tx.rollback().catch(() => undefined);
    await this.session.close().catch(() => undefined);
  }
}
