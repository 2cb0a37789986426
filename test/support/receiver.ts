import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the n-th request (0-based): answer it (status, headers, body), or hold it. */
export type Behaviour = (request: Received, index: number, response: ServerResponse) => void | Promise<void>;

export const answer =
  (status: number, headers: Record<string, string> = {}, body = '') =>
  (_request: Received, _index: number, response: ServerResponse) => {
    response.writeHead(status, headers).end(body);
  };

/** Answers `status` with its headers at once, then one byte of body every `intervalMs`, never ending. */
export const trickle =
  (intervalMs: number, status = 200) =>
  (_request: Received, _index: number, response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'text/plain' });
    const timer = setInterval(() => response.write('.'), intervalMs);
    response.on('close', () => clearInterval(timer));
  };

/**
 * A real HTTP receiver on loopback that records every request, for asserting on the bytes and headers a
 * delivery carried. Its behaviour can change between steps of a test.
 */
export class TestReceiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = answer(204);
  inFlight = 0;
  maxInFlight = 0;
  #server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const index = this.received.push(request) - 1;
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.on('close', () => this.inFlight--);
      void this.behaviour(request, index, res);
    });
  });
  #waiters: { count: number; resolve: () => void }[] = [];

  static async start(): Promise<TestReceiver> {
    const receiver = new TestReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    receiver.#server.on('request', () => setImmediate(() => receiver.#wake()));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `count` requests have arrived in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs = 15_000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver got ${this.received.length} of ${count} requests`)), timeoutMs);
      this.#waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  #wake(): void {
    this.#waiters = this.#waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A black hole on loopback: accepts every TCP connection and never reads or answers on it. */
export class BlackHole {
  connections = 0;
  #sockets = new Set<Socket>();
  #server = createTcpServer((socket) => {
    this.connections++;
    this.#sockets.add(socket);
    socket.pause();
    socket.on('error', () => undefined);
    socket.on('close', () => this.#sockets.delete(socket));
  });

  static async start(): Promise<BlackHole> {
    const hole = new BlackHole();
    await new Promise<void>((resolve) => hole.#server.listen(0, '127.0.0.1', resolve));
    return hole;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Connections open now (the sender closes each one when its attempt times out). */
  get open(): number {
    return this.#sockets.size;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
