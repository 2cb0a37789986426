import path from 'node:path';
import { errorCode } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { secureDataDir, tightenDataDir } from './data-dir-modes.js';
import { describeDbError } from './db-errors.js';
import { EmbeddedAutovacuum } from './embedded-autovacuum.js';
import { EmbeddedPool, type Session } from './embedded-pool.js';
import type { NamedStatement, StatementResult } from './embedded-protocol.js';
import type { DatabaseHealth } from './health.js';
import { PostgresPool } from './postgres-pool.js';

export type { DatabaseHealth } from './health.js';
export type { NamedStatement } from './embedded-protocol.js';

/**
 * What a repository needs: run one parameterised statement. Both the database and a transaction are one.
 * `statement` is the SQL text, or a NamedStatement (see namedStatement) for a hot statement the database should
 * parse once per session instead of at every run.
 */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(statement: string | NamedStatement, params?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number }>;
}

const namedTexts = new Map<string, string>();

/**
 * A statement run by name (a server-side prepared statement). The API is one more form of what `query` takes, so a
 * repository names its statement once, where it is defined, and calls it as any other. Each session (a pg
 * connection; PGlite's one session, through the same pg client) parses it the first time it runs it there and then
 * only binds and executes it: the server skips parsing and analysis, and, once it settles on a generic plan (after
 * five runs, when that plan costs no more than the custom ones), planning too. The idle claim's round trip went
 * from ~0.8 to ~0.3 ms on PostgreSQL, ~1.6 to ~0.5 ms on PGlite (bench/README.md, "The claim").
 *
 * pg records, per connection, which names it has prepared: a connection that replaces a lost one prepares them
 * again; a statement whose parse failed is not taken as prepared; one that parsed stays prepared whatever its runs
 * did (a bad parameter, an error, a ROLLBACK: prepared statements are not transactional). test/db/named-statements
 * checks each of these on both databases.
 *
 * Only for the few statements run all the time (the claim, the outcome batch, the check before claims): each
 * holds a prepared statement and its cached plan in every session, and a generic plan must be checked to be as
 * good as the custom ones (test/outbox/claim-plan.test.ts does for the claim). A name is for one text only: pg
 * refuses, on a connection, a name it prepared with another text, and this refuses it at once, when defined. A
 * changed text takes a new name (`_v2`). A migration that changes the type of a column a prepared statement
 * returns makes its next run on an older session fail (0A000, cached plan must not change result type).
 */
export function namedStatement(name: string, text: string): NamedStatement {
  const known = namedTexts.get(name);
  if (known !== undefined && known !== text) throw new Error(`the statement name ${name} is already taken by another statement`);
  namedTexts.set(name, text);
  return Object.freeze({ name, text });
}

const textOf = (statement: string | NamedStatement): string => (typeof statement === 'string' ? statement : statement.text);

/** A transaction's statements, and what to do once it has committed. */
export interface Transaction extends Queryable {
  /**
   * Runs `callback` once this transaction has committed (never if it rolls back, once if it is run again after a
   * deadlock): how a change tells others of what it committed, when a NOTIFY inside it would cost too much.
   */
  afterCommit(callback: () => void): void;
}

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. A deadlock or
   * serialization failure runs it again (up to 3 times), so `work` must have no effect outside the transaction.
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs `work` on one dedicated connection (session-level advisory locks need the same session). */
  withConnection<T>(work: (conn: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel` from any process. PostgreSQL only: PGlite has one session,
   * which a LISTEN would hold for ever; its single process signals in memory instead. A lost connection is
   * re-established with backoff; `onReconnect` is then called, since NOTIFYs sent meanwhile were missed.
   */
  listen(channel: string, onNotify: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>;
  /** Whether the database is there, answered within `timeoutMs` (see DatabaseHealth). Never throws. */
  health(timeoutMs: number): Promise<DatabaseHealth>;
  close(): Promise<void>;
}

// 40001 serialization_failure, 40P01 deadlock_detected.
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const MAX_TRANSACTION_ATTEMPTS = 3;

/** The URLs `createDatabase` opens as PostgreSQL; anything else is refused (unset means the embedded database). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** Connections a PostgreSQL database keeps open, unless `poolSize` says otherwise. */
export const DEFAULT_POOL_SIZE = 10;

export interface DatabaseOptions {
  /** A `postgres://` URL; unset means the embedded database in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL: connections in the pool (DATABASE_POOL_SIZE); default DEFAULT_POOL_SIZE. */
  poolSize?: number | undefined;
  /** Where lost connections and failed clean-ups are told (at warn; nothing else). Default: nowhere. */
  logger?: Logger | undefined;
  /** PostgreSQL: how long opening a connection may take before it fails; default DEFAULT_CONNECT_TIMEOUT_MS (10 s). */
  connectTimeoutMs?: number | undefined;
}

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  const log = options.logger ?? createLogger('silent');
  if (options.databaseUrl) {
    if (!isPostgresUrl(options.databaseUrl)) {
      throw new Error('DATABASE_URL must be a postgres:// URL (or unset for the embedded database)');
    }
    const pool = new PostgresPool(options.databaseUrl, options.poolSize ?? DEFAULT_POOL_SIZE, log, options.connectTimeoutMs);
    return sessionDatabase(
      'postgres',
      pool,
      {
        log,
        listen: (channel, onNotify, onReconnect) => pool.listener.listen(channel, onReconnect ? { onNotify, onReconnect } : { onNotify }),
        health: (timeoutMs) => pool.health(timeoutMs),
      },
      () => pool.end(),
    );
  }
  return openEmbedded(options.dataDir, log);
}

/**
 * PGlite in `dataDir`, on a thread of its own (see embedded-thread.ts), guarded by a lock file against a second
 * process. On the service's own thread it halved the drain and stopped delivery during a large cleanup; a
 * statement's round trip between the threads costs ~0.35 ms, which batched claims and outcomes hardly notice
 * (bench/README.md, "The embedded database").
 */
async function openEmbedded(dataDir: string, log: Logger): Promise<Database> {
  // PGlite does not create parent directories of its data directory; what it and this process create is the owner's
  // alone, and an existing directory is made so (see data-dir-modes.ts).
  secureDataDir(dataDir, log);
  const lock: DataDirLock = acquireDataDirLock(dataDir);
  try {
    const pool = await EmbeddedPool.open(path.join(dataDir, 'pgdata'));
    tightenDataDir(dataDir);
    const autovacuum = new EmbeddedAutovacuum((sql) => pool.query(sql));
    return sessionDatabase('pglite', pool, { log, autovacuum, health: (timeoutMs) => pool.health(timeoutMs) }, async () => {
      autovacuum.close();
      try {
        await pool.end();
        tightenDataDir(dataDir);
      } finally {
        lock.release();
      }
    });
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** What sessionDatabase needs of a pool: pg.Pool, or the embedded database's thread. */
interface SessionPool {
  query(statement: string | NamedStatement, params?: unknown[]): Promise<StatementResult>;
  connect(): Promise<Session>;
}

interface SessionOptions {
  log: Logger;
  autovacuum?: EmbeddedAutovacuum;
  listen?: Database['listen'];
  health: Database['health'];
}

function sessionDatabase(kind: DatabaseKind, pool: SessionPool, options: SessionOptions, close: () => Promise<void>): Database {
  const { autovacuum } = options;
  const asQueryable = (client: SessionPool | Session): Queryable => ({
    async query<R extends object>(statement: string | NamedStatement, params?: readonly unknown[]) {
      const result = await client.query(statement, params as unknown[] | undefined);
      autovacuum?.noteWrite(textOf(statement), result.command, result.rowCount ?? 0);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
  });
  let closed = false;
  return {
    kind,
    ...asQueryable(pool),
    async transaction(work) {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let released = false;
        const committed: (() => void)[] = [];
        try {
          await client.query('BEGIN');
          const result = await work({ ...asQueryable(client), afterCommit: (callback) => void committed.push(callback) });
          await client.query('COMMIT');
          client.release();
          released = true;
          for (const callback of committed) {
            try {
              callback();
            } catch (err) {
              options.log.error({ err }, 'an after-commit callback failed');
            }
          }
          return result;
        } catch (err) {
          let rollbackFailed: Error | undefined;
          await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
            // Most often the connection is gone (and `err` says so); the session is not reused either way.
            rollbackFailed = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
            options.log.warn({ error: describeDbError(rollbackErr), cause: describeDbError(err) }, 'ROLLBACK failed');
          });
          client.release(rollbackFailed);
          released = true;
          // A deadlock or serialization failure rolled everything back: running the work again is safe.
          if (attempt < MAX_TRANSACTION_ATTEMPTS && RETRYABLE_SQLSTATES.has(errorCode(err) ?? '')) continue;
          throw err;
        } finally {
          if (!released) client.release();
        }
      }
    },
    async withConnection(work) {
      const client = await pool.connect();
      try {
        return await work(asQueryable(client));
      } finally {
        client.release();
      }
    },
    // PGlite has one session, which a LISTEN would hold for ever; its single process signals in memory instead.
    listen: options.listen ?? (async () => async () => {}),
    async health(timeoutMs) {
      if (closed) return { ok: false, reason: 'the database is closed' };
      return options.health(timeoutMs);
    },
    async close() {
      if (closed) return;
      closed = true;
      await close();
    },
  };
}
