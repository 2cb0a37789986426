import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '../../src/db/database.js';
import { dropPgDatabase } from '../support/databases.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

/**
 * A TCP proxy on loopback in front of the shared PostgreSQL, standing for the network between a service and its
 * database: `cut()` drops every connection through it and refuses new ones (as a server restart or a failover
 * looks from the service), `restore()` lets connections through again. Only the service pointed at the proxy
 * loses its database; the PostgreSQL server, which other test files use at the same time, is never touched.
 */
export class TcpProxy {
  readonly #sockets = new Set<Socket>();
  #cut = false;
  #server: Server;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.#sockets.add(from);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          this.#sockets.delete(from);
          to.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Drops every connection (reset, as a vanished server) and refuses new ones until `restore()`. */
  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  restore(): void {
    this.#cut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * This test file's PostgreSQL database, reached through a TcpProxy: cutting the proxy takes the database away from
 * the service on it alone. Disposing closes the proxy and drops the database.
 */
export async function openTestDatabaseBehindProxy(): Promise<{ testDb: TestDatabase; proxy: TcpProxy }> {
  const direct = await openTestDatabase();
  await direct.db.close();
  const target = new URL(direct.url!);
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  const proxied = new URL(direct.url!);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const db = await createDatabase({ databaseUrl: proxied.toString(), dataDir: '' });
  const testDb: TestDatabase = {
    db,
    kind: 'postgres',
    url: proxied.toString(),
    async dispose() {
      proxy.restore();
      await db.close().catch(() => undefined);
      await proxy.close();
      await dropPgDatabase(new URL(direct.url!).pathname.slice(1));
    },
  };
  return { testDb, proxy };
}
