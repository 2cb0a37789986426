import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { isDatabaseUnavailable } from '../../src/db/db-errors.js';
import { createLogger } from '../../src/logger.js';
import { freePort } from '../cli/cli-support.js';
import { dropPgDatabase, withMaintenanceClient } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';
import { openTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/test-service.js';

// Every way of not getting a PostgreSQL connection is the database being away: 503 database_unavailable with
// Retry-After, told once in the log per outage, never a 500 `bug` with a stack per call. PostgreSQL only: the
// pglite project leaves this file out (vitest.config.ts; the embedded database has no connections, and
// database-outage.test.ts stops its thread). All on loopback: this file's own database
// on the shared server (made unreachable by ALLOW_CONNECTIONS and a rename, never the server itself), and small TCP
// servers standing for a server that refuses, resets, never answers, or answers what PostgreSQL would not.

/** A PostgreSQL ErrorResponse, as a server sends it to refuse a session. */
function errorResponse(sqlstate: string, message: string): Buffer {
  const field = (type: string, value: string) => Buffer.from(`${type}${value}\0`);
  const fields = Buffer.concat([field('S', 'FATAL'), field('V', 'FATAL'), field('C', sqlstate), field('M', message), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

type Behaviour = 'pass' | 'refuse' | 'reset' | 'silent' | 'not-postgres' | { sqlstate: string; message: string };

/**
 * What the service takes for its PostgreSQL server: a loopback port that passes connections on to the real server,
 * or behaves as told. A change of behaviour drops the connections already open, as a server restart would.
 */
class DatabaseFront {
  #behaviour: Behaviour = 'pass';
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {
    this.#server = createServer((client) => this.#accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<DatabaseFront> {
    const front = new DatabaseFront(target);
    await new Promise<void>((resolve) => front.#server.listen(0, '127.0.0.1', resolve));
    front.port = (front.#server.address() as AddressInfo).port;
    return front;
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  #accept(client: Socket): void {
    this.#track(client);
    const behaviour = this.#behaviour;
    if (behaviour === 'pass') {
      const upstream = createConnection(this.target);
      this.#track(upstream);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    } else if (behaviour === 'reset') {
      client.resetAndDestroy();
    } else if (behaviour === 'not-postgres') {
      // What an HTTP server on that port answers to the startup message.
      client.once('data', () => client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    } else if (typeof behaviour === 'object') {
      client.once('data', () => client.end(errorResponse(behaviour.sqlstate, behaviour.message)));
    }
    // 'silent': the connection stays open and nothing is ever said.
  }

  async become(behaviour: Behaviour): Promise<void> {
    const wasRefusing = this.#behaviour === 'refuse';
    this.#behaviour = behaviour;
    for (const socket of this.#sockets) socket.destroy();
    if (behaviour === 'refuse') {
      // Nothing listens on the port any more: a connection is refused (ECONNREFUSED).
      this.#server.close();
    } else if (wasRefusing) {
      await new Promise<void>((resolve) => this.#server.listen(this.port, '127.0.0.1', resolve));
    }
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    if (this.#behaviour !== 'refuse') await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

describe('the API when no connection to PostgreSQL can be had', () => {
  let t: TestService;
  let front: DatabaseFront;
  let name: string;
  const lines: { level: number; msg: string }[] = [];
  const OUTAGE = 'the database is unavailable: calls that need it answer 503 until it is back';

  beforeAll(async () => {
    const direct = await openTestDatabase();
    await direct.db.close();
    const url = new URL(direct.url!);
    name = url.pathname.slice(1);
    front = await DatabaseFront.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(front.port);
    // A short time-out for a connection that never opens (the default is 10 s).
    const db = await createDatabase({ databaseUrl: url.toString(), dataDir: '', connectTimeoutMs: 1_000 });
    const testDb: TestDatabase = {
      db,
      kind: 'postgres',
      url: url.toString(),
      async dispose() {
        await db.close().catch(() => undefined);
        await front.close();
        await dropPgDatabase(name);
        await dropPgDatabase(`${name}_away`);
      },
    };
    t = await startTestService({ testDb, logger: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }) });
  });
  afterAll(async () => {
    await t?.close();
    await t?.testDb.dispose();
  });

  /** Runs `sql` on the shared server's maintenance database, again while PostgreSQL says the database is in use. */
  const maintenance = (sql: string) =>
    waitUntil(
      () =>
        withMaintenanceClient((client) => client.query(sql)).then(
          () => true,
          (err: Error) => {
            if (/is being accessed by other users/.test(err.message)) return false;
            throw err;
          },
        ),
      sql,
      10_000,
    );
  const terminate = () => withMaintenanceClient((client) => client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]));

  /** During the outage `begin` starts and `end` ends, every call answers 503 database_unavailable, told once. */
  async function expectOutage(begin: () => Promise<unknown>, end: () => Promise<unknown>): Promise<void> {
    expect((await t.admin.get('/api/admin/webhooks')).status).toBe(200);
    const before = lines.length;
    await begin();
    for (let i = 0; i < 3; i++) {
      const answer = await t.admin.get('/api/admin/webhooks');
      expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 503, body: { key: 'database_unavailable', message: 'the database is unavailable right now: try again in 5 seconds' } });
      expect(answer.headers['retry-after']).toBe('5');
    }
    expect((await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'admin', password: 'wrong-password' })).status).toBe(503);
    await end();
    await waitUntil(async () => (await t.admin.get('/api/admin/webhooks')).status === 200, 'the API answers again', 20_000);
    const told = lines.slice(before);
    expect(told.filter((line) => line.msg === OUTAGE)).toHaveLength(1);
    expect(told.filter((line) => line.msg === 'the database answers again')).toHaveLength(1);
    expect(told.filter((line) => line.level >= 50)).toEqual([]);
  }

  it('55000: the database does not allow connections (ALLOW_CONNECTIONS false), its sessions ended', async () => {
    await expectOutage(
      async () => {
        await maintenance(`ALTER DATABASE ${pg.escapeIdentifier(name)} ALLOW_CONNECTIONS false`);
        await terminate();
      },
      () => maintenance(`ALTER DATABASE ${pg.escapeIdentifier(name)} ALLOW_CONNECTIONS true`),
    );
  });

  it('3D000: the database does not exist (renamed away)', async () => {
    const away = `${name}_away`;
    await expectOutage(
      async () => {
        await maintenance(`ALTER DATABASE ${pg.escapeIdentifier(name)} ALLOW_CONNECTIONS false`);
        await terminate();
        await maintenance(`ALTER DATABASE ${pg.escapeIdentifier(name)} RENAME TO ${pg.escapeIdentifier(away)}`);
      },
      async () => {
        await maintenance(`ALTER DATABASE ${pg.escapeIdentifier(away)} RENAME TO ${pg.escapeIdentifier(name)}`);
        await maintenance(`ALTER DATABASE ${pg.escapeIdentifier(name)} ALLOW_CONNECTIONS true`);
      },
    );
  });

  it.each([
    ['53300 too many clients', { sqlstate: '53300', message: 'sorry, too many clients already' }],
    ['57P03 the server starting up', { sqlstate: '57P03', message: 'the database system is starting up' }],
    ['08004 the server refusing the connection', { sqlstate: '08004', message: 'the server rejected the connection' }],
    ['28000 a session not allowed (pg_hba)', { sqlstate: '28000', message: 'no pg_hba.conf entry for host "127.0.0.1"' }],
    ['a refused connection (ECONNREFUSED)', 'refuse'],
    ['a reset connection (ECONNRESET)', 'reset'],
    ['a server that never answers (the connection time-out)', 'silent'],
    ['a server that does not speak PostgreSQL', 'not-postgres'],
  ] as [string, Behaviour][])('%s', async (_, behaviour) => {
    await expectOutage(
      () => front.become(behaviour),
      () => front.become('pass'),
    );
  });
});

/** A loopback server that answers a client's SSLRequest with `answer`, then with `after` (if given) and closes. */
async function tlsRefuser(answer: string, after?: string): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      socket.write(answer);
      if (after !== undefined) socket.once('data', () => socket.end(after));
      else socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a connection that fails in TLS', () => {
  it.each([
    ['a server without TLS (answers N to the SSLRequest)', 'N', undefined],
    ['a TLS handshake answered with garbage', 'S', 'HTTP/1.1 400 Bad Request\r\n\r\n'],
  ])('%s is the database being away', async (_, answer, after) => {
    const server = await tlsRefuser(answer, after);
    const db = await createDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${server.port}/test?sslmode=no-verify`, dataDir: '', connectTimeoutMs: 2_000 });
    try {
      for (const attempt of [() => db.query('SELECT 1'), () => db.transaction(async (tx) => tx.query('SELECT 1')), () => db.withConnection(async (c) => c.query('SELECT 1'))]) {
        const err = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, String(err)).toBeInstanceOf(Error);
        expect(isDatabaseUnavailable(err), String(err)).toBe(true);
      }
    } finally {
      await db.close();
      await server.close();
    }
  });

  it('a closed port, for each way of asking (a statement, a transaction, a connection of one\'s own)', async () => {
    const db = await createDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/test`, dataDir: '' });
    try {
      for (const attempt of [() => db.query('SELECT 1'), () => db.transaction(async (tx) => tx.query('SELECT 1')), () => db.withConnection(async (c) => c.query('SELECT 1'))]) {
        expect(isDatabaseUnavailable(await attempt().catch((e: unknown) => e))).toBe(true);
      }
    } finally {
      await db.close();
    }
  });
});
