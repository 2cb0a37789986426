import pg from 'pg';
import type { Logger } from '../logger.js';
import { connectionFailed, describeDbError } from './db-errors.js';
import type { Session } from './embedded-pool.js';
import type { NamedStatement, StatementResult } from './embedded-protocol.js';
import type { DatabaseHealth } from './health.js';
import { PostgresListener } from './postgres-listener.js';
import { typeParsers } from './type-parsers.js';

const KEEPALIVE_DELAY_MS = 10_000;
// The health connection is kept this long between checks (a probe every few seconds reuses it), and a check
// waiting for it gives up after HEALTH_CONNECT_MS (checks of a database that swallows packets do not pile up).
const HEALTH_IDLE_MS = 60_000;
const HEALTH_CONNECT_MS = 5_000;
/**
 * How long opening a connection may take (TCP, TLS, the server's answer to the startup message) before it fails: a
 * server that accepts and never answers would otherwise hold every call that needs a new connection for ever.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** pg's form of a statement: with a name, pg prepares it once per connection and then sends Bind/Execute only. */
function queryConfig(statement: string | NamedStatement, values: unknown[] | undefined): pg.QueryConfig {
  return typeof statement === 'string' ? { text: statement, values } : { name: statement.name, text: statement.text, values };
}

/**
 * PostgreSQL: the pool the repositories use, a connection of its own for health checks, and the listener.
 * A connection can be lost at any moment (the server restarting, a failover, `pg_terminate_backend`); pg then
 * emits 'error' on its client, which ends the process unless handled. Every client here is handled: idle in the
 * pool (the pool drops it), checked out (the session's statement fails and the client is discarded on release),
 * listening (the listener reconnects). A lost connection fails what ran on it, and nothing else.
 */
export class PostgresPool {
  readonly #pool: pg.Pool;
  // Its own connection, so a pool whose every connection is taken (long transactions, a burst of requests)
  // does not hold up the answer to "is the database there?".
  readonly #healthPool: pg.Pool;
  readonly listener: PostgresListener;

  constructor(
    connectionString: string,
    poolSize: number,
    private readonly log: Logger,
    connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
  ) {
    const common = { connectionString, types: typeParsers, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS };
    // The time-out is each new connection's own (pg.Client's option): the pool's option of the same name would also
    // bound the wait for a free connection while all are busy, which is load, not an outage.
    class TimedClient extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      }
    }
    this.#pool = new pg.Pool({ ...common, max: poolSize, Client: TimedClient });
    this.#healthPool = new pg.Pool({ ...common, max: 1, idleTimeoutMillis: HEALTH_IDLE_MS, connectionTimeoutMillis: HEALTH_CONNECT_MS });
    // An idle connection lost (a server restart): the pool drops it, and the next query opens another.
    for (const pool of [this.#pool, this.#healthPool]) {
      pool.on('error', (err) => this.log.warn({ error: describeDbError(err) }, 'an idle database connection was lost; the next statement opens another'));
    }
    this.listener = new PostgresListener(connectionString, log);
  }

  /**
   * One statement on any connection. Not pg.Pool's query, which opens a connection too but fails the same way
   * whether the connection or the statement failed; like it, a connection whose statement failed is discarded.
   */
  async query(statement: string | NamedStatement, params?: unknown[]): Promise<StatementResult> {
    const session = await this.connect();
    try {
      const result = await session.query(statement, params);
      session.release();
      return result;
    } catch (err) {
      session.release(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  /**
   * A connection of one's own; a loss while it is held fails its statements, and it is discarded on release. Not
   * getting one at all is the database being away, whatever the error says (connectionFailed).
   */
  async connect(): Promise<Session> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (err) {
      throw connectionFailed(err);
    }
    let lost: Error | undefined;
    // Checked out, the client has no listener of the pool's: a loss between two statements (while the caller
    // works between them) would emit 'error' on it unhandled.
    const onError = (err: Error) => {
      if (!lost) this.log.warn({ error: describeDbError(err) }, 'a database connection in use was lost');
      lost ??= err;
    };
    client.on('error', onError);
    let released = false;
    return {
      query: async (statement, params) => {
        const result = await client.query(queryConfig(statement, params));
        return { rows: result.rows as Record<string, unknown>[], rowCount: result.rowCount, command: result.command };
      },
      release: (err) => {
        if (released) return;
        released = true;
        client.off('error', onError);
        // With an error the pool discards the connection rather than hand it to the next caller.
        client.release(lost ?? err);
      },
    };
  }

  /** "SELECT 1" on the health connection, within `timeoutMs`. */
  async health(timeoutMs: number): Promise<DatabaseHealth> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.#healthPool.query('SELECT 1'), timeout]);
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: describeDbError(err).message };
    } finally {
      clearTimeout(timer);
    }
  }

  async end(): Promise<void> {
    await this.listener.close();
    await Promise.all([this.#pool.end(), this.#healthPool.end()]);
  }
}
