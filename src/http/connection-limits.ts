import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from './client-address.js';

/** How long a client may take to send a request, and how many connections one address may hold open. */
export interface ConnectionLimits {
  /** A whole request, headers and body, must arrive within this (ms); past it the connection gets 408 and is closed. */
  requestTimeoutMs: number;
  /** Connections one peer address (IPv6: one /64) may hold open at once; 0 = no limit. */
  maxConnectionsPerAddress: number;
}

/**
 * Fastify's options for the request deadline. Fastify leaves `requestTimeout` at 0 (none): a client that announced
 * a large body and sent one byte every few seconds held its connection for as long as it liked, and 10,000 of them
 * used up the process's open files. Node checks the deadline every `connectionsCheckingInterval` (30 s by default):
 * once a second here, so a slow request is closed at most a second after its deadline (the check walks only the
 * open connections). The headers get the same deadline or 10 s, whichever is shorter: a request line and headers
 * are a few hundred bytes.
 */
export function requestDeadlineOptions(limits: Pick<ConnectionLimits, 'requestTimeoutMs'>): {
  requestTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const { requestTimeoutMs } = limits;
  return {
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: Math.min(requestTimeoutMs, HEADERS_TIMEOUT_MS), connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs) },
  };
}

const HEADERS_TIMEOUT_MS = 10_000;

/**
 * Refuses a connection from an address that already holds `maxConnectionsPerAddress` open: it is answered 429 and
 * closed before any request on it is read, so slow clients from one address (or one IPv6 /64) cannot take every
 * open file, and `/health` keeps answering other peers. Behind a proxy every client shares the proxy's address:
 * raise the limit to what the proxy opens, or set it to 0.
 */
export function limitConnectionsPerAddress(server: Server, maxConnectionsPerAddress: number): void {
  if (maxConnectionsPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress ?? '');
    const count = open.get(key) ?? 0;
    if (count >= maxConnectionsPerAddress) {
      socket.end(tooManyConnections(maxConnectionsPerAddress));
      socket.destroySoon();
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

function tooManyConnections(max: number): string {
  const body = JSON.stringify({ key: 'too_many_requests', message: `too many open connections from this address (at most ${max}): close some and try again` });
  return (
    `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
