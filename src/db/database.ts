import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { EmbeddedAutovacuum } from './embedded-autovacuum.js';

/** What a repository needs: run one parameterised statement. Both the database and a transaction are one. */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number }>;
}

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. A deadlock or
   * serialization failure runs it again (up to 3 times), so `work` must have no effect outside the transaction.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs `work` on one dedicated connection (session-level advisory locks need the same session). */
  withConnection<T>(work: (conn: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel` from any process. PostgreSQL only: PGlite has one session,
   * which a LISTEN would hold for ever; its single process signals in memory instead.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// int8 (COUNT(*), bigint ids) as a number rather than a string: ids stay far below 2^53, and one type
// everywhere beats a string that leaks into JSON answers. Same parsers for pg and PGlite (the adapter parses with pg).
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

// 40001 serialization_failure, 40P01 deadlock_detected.
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const MAX_TRANSACTION_ATTEMPTS = 3;

export interface DatabaseOptions {
  /** A `postgres://` URL; unset means the embedded database in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
}

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(options.databaseUrl)) {
      throw new Error('DATABASE_URL must be a postgres:// URL (or unset for the embedded database)');
    }
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10, types: typeParsers });
    return poolDatabase('postgres', pool, undefined, async () => pool.end());
  }
  return openEmbedded(options.dataDir);
}

/** PGlite in `dataDir`, behind a pg.Pool of one connection, guarded by a lock file against a second process. */
async function openEmbedded(dataDir: string): Promise<Database> {
  // PGlite does not create parent directories of its data directory.
  mkdirSync(dataDir, { recursive: true });
  const lock: DataDirLock = acquireDataDirLock(dataDir);
  try {
    const pglite = await PGlite.create(path.join(dataDir, 'pgdata'));
    const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, types: typeParsers });
    const autovacuum = new EmbeddedAutovacuum((sql) => pool.query(sql));
    return poolDatabase('pglite', pool, autovacuum, async () => {
      await pool.end();
      await pglite.close();
      lock.release();
    });
  } catch (err) {
    lock.release();
    throw err;
  }
}

function poolDatabase(kind: DatabaseKind, pool: pg.Pool, autovacuum: EmbeddedAutovacuum | undefined, close: () => Promise<void>): Database {
  // A pool error (a server restart dropping an idle connection) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const asQueryable = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query(text, params) {
      const result = await client.query(text, params as unknown[] | undefined);
      autovacuum?.noteWrite(result.command, result.rowCount ?? 0);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
  });
  let closed = false;
  // LISTEN connections are held until unlistened; close() releases any still held, or pool.end() would wait for ever.
  const listeners = new Set<() => Promise<void>>();
  return {
    kind,
    ...asQueryable(pool),
    async transaction(work) {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const result = await work(asQueryable(client));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          // A deadlock or serialization failure rolled everything back: running the work again is safe.
          if (attempt < MAX_TRANSACTION_ATTEMPTS && RETRYABLE_SQLSTATES.has((err as { code?: string }).code ?? '')) continue;
          throw err;
        } finally {
          client.release();
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
    async listen(channel, onNotify) {
      if (kind === 'pglite') return async () => {};
      const client = await pool.connect();
      client.on('notification', (msg) => {
        if (msg.channel === channel) onNotify(msg.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      const stop = async () => {
        if (!listeners.delete(stop)) return;
        await client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
        client.release();
      };
      listeners.add(stop);
      return stop;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...listeners].map((stop) => stop()));
      await close();
    },
  };
}
