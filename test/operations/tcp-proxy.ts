import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

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
