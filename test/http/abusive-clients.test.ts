import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { startTestService, type TestService } from '../support/test-service.js';

// Clients that try to hold the service's connections or its main thread: a real listener on loopback, with a short
// request deadline and a small per-address cap so the test does not wait long or open many files.
const REQUEST_TIMEOUT_MS = 2_000;
const MAX_CONNECTIONS_PER_ADDRESS = 6;

interface OpenedSocket {
  socket: Socket;
  /** What the server sent, and whether it closed the connection, once it did (or when `withinMs` ran out). */
  closed(withinMs: number): Promise<{ closed: boolean; received: string }>;
}

/** A connection from `localAddress` (any 127.0.0.0/8 address is this host's loopback). */
function open(port: number, localAddress: string): Promise<OpenedSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const chunks: Buffer[] = [];
    let isClosed = false;
    const closing = new Promise<void>((done) => socket.once('close', () => ((isClosed = true), done())));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        async closed(withinMs) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([closing, new Promise<void>((done) => (timer = setTimeout(done, withinMs)))]);
          clearTimeout(timer);
          return { closed: isClosed, received: Buffer.concat(chunks).toString('utf8') };
        },
      }),
    );
    socket.once('error', reject);
  });
}

describe('slow clients and anonymous floods', () => {
  let t: TestService;
  let port: number;
  beforeAll(async () => {
    t = await startTestService({ env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS_PER_ADDRESS) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => t?.close());

  it('closes a connection whose body trickles in past the request deadline, answering 408', async () => {
    const slow = await open(port, '127.0.0.1');
    slow.socket.write('POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n');
    // One byte every 200 ms: never idle long, never done. Bounded: at most 60 bytes.
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write('{'), 200);
    try {
      const { closed, received } = await slow.closed(REQUEST_TIMEOUT_MS + 10_000);
      expect(closed).toBe(true);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(received).toContain('"key":"invalid_parameter"');
    } finally {
      clearInterval(trickle);
      slow.socket.destroy();
    }
  }, 20_000);

  it('refuses connections past the per-address cap with 429, while other addresses are served', async () => {
    const held: OpenedSocket[] = [];
    try {
      // Half-sent requests: each holds its connection until the headers' deadline.
      for (let i = 0; i < MAX_CONNECTIONS_PER_ADDRESS; i++) {
        const socket = await open(port, '127.0.0.2');
        socket.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
        held.push(socket);
      }
      const refused = await open(port, '127.0.0.2');
      const answer = await refused.closed(5_000);
      expect(answer.closed).toBe(true);
      expect(answer.received).toMatch(/^HTTP\/1\.1 429 /);
      expect(answer.received).toContain('too many open connections from this address (at most 6)');

      // Another address is not held back by the first one's connections.
      const health = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expect(health.status).toBe(200);

      // The held connections reach their deadline and close; the address may connect again.
      for (const socket of held) expect((await socket.closed(REQUEST_TIMEOUT_MS + 10_000)).closed).toBe(true);
      const again = await open(port, '127.0.0.2');
      again.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expect((await again.closed(5_000)).received).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of held) socket.socket.destroy();
    }
  }, 30_000);

  it('refuses a large body from a caller not signed in before parsing it, by Content-Length and when chunked', async () => {
    // 1 MiB of {"x":[1,1,…]}: under the body limit, but far over what sign-in needs.
    const body = `{"x":[${Array(500_000).fill('1').join(',')}]}`;
    const byLength = await t.anonymous.request('POST', '/api/auth/login', body, { 'content-type': 'application/json' });
    expect(byLength).toMatchObject({
      status: 413,
      body: { key: 'payload_too_large', message: 'the request body is larger than the limit of 16384 bytes for a caller not signed in' },
    });
    const chunked = await rawRequest(
      port,
      `POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ key: 'payload_too_large' });
    // A signed-in caller may still send large bodies (up to BODY_LIMIT_BYTES): the rule is for callers not signed in.
    const signedIn = await t.admin.request('POST', '/api/admin/users', `{"username":"big","email":"big@example.com","password":"big-password","pad":[${Array(20_000).fill('1').join(',')}]}`, {
      'content-type': 'application/json',
    });
    expect(signedIn.status).toBe(201);
    // Sign-in itself is unaffected.
    expect((await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'big', password: 'big-password' })).status).toBe(200);
  });
});
