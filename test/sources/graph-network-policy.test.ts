import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoltGraph, unreachableMessage } from '../../src/graph/bolt/bolt-graph.js';
import { parseReceiverPolicy } from '../../src/network/receiver-policy.js';
import { fixedResolver } from '../support/fixed-resolver.js';
import { useTestService } from '../support/test-service.js';

interface Listener {
  port: number;
  /** The connections it accepted. */
  connections(): number;
  close(): Promise<void>;
}

/** A loopback listener that counts the connections it got and answers each as `answer` says (nothing: a silent port). */
async function listener(host: string, answer?: (socket: Socket) => void): Promise<Listener> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    answer?.(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}

// Issue 44, item 10: a Bolt URL went wherever it pointed, and its errors told what listened there. Graph URLs follow
// the receiver policy, checked as each connection is made, and every "cannot reach" answers the same. Loopback only:
// 127.0.0.2 is denied here (RECEIVER_DENY), 127.0.0.1 allowed.
describe('graph URLs under the receiver policy', () => {
  const t = useTestService({ env: { RECEIVER_DENY: '127.0.0.2/32' } });
  const listeners: Listener[] = [];
  const boltSource = (key: string, url: string) => t.admin.post('/api/admin/sources', { key, name: key, graph: { vendor: 'neo4j', url, user: 'neo4j', password: 'password-1' } });
  let denied: Listener;

  beforeAll(async () => {
    denied = await listener('127.0.0.2', (socket) => socket.write('HTTP/1.1 400 Bad Request\r\n\r\n'));
    listeners.push(denied);
  });
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.close()));
  });

  it('refuses a source whose URL the policy denies without connecting to it, with the one "cannot reach" answer', async () => {
    const answer = await boltSource('denied', `bolt://127.0.0.2:${denied.port}`);
    // The key and status of a graph out of reach (issue 44's item 6 gives them LKE's): the message is what this checks.
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.body).toEqual({ key: expect.any(String), message: `graph: ${unreachableMessage('data source "denied"')}` });
    expect(denied.connections()).toBe(0);
    expect((await t.admin.get('/api/admin/sources/denied')).status).toBe(404);
  });

  it('checks the addresses a name resolves to as the connection is made, a TLS one too', async () => {
    const policy = parseReceiverPolicy({ RECEIVER_DENY: '127.0.0.2/32' });
    const resolve = fixedResolver('graph.test', ['127.0.0.2']);
    for (const scheme of ['bolt', 'bolt+ssc', 'neo4j']) {
      const graph = new BoltGraph({ url: `${scheme}://graph.test:${denied.port}`, user: 'neo4j', password: 'password-1', label: 'data source "named"', policy, resolve });
      try {
        await expect(graph.verify()).rejects.toMatchObject({ key: 'data_source_unavailable', message: unreachableMessage('data source "named"') });
      } finally {
        await graph.close();
      }
    }
    expect(resolve.calls).toBeGreaterThan(0);
    expect(denied.connections()).toBe(0);
  });

  it('answers a closed port, an HTTP server, another banner and a silent port alike', async () => {
    const closed = await listener('127.0.0.1');
    await closed.close();
    const http = await listener('127.0.0.1', (socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n')));
    const banner = await listener('127.0.0.1', (socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n'));
    const silent = await listener('127.0.0.1');
    listeners.push(http, banner, silent);
    const answers = await Promise.all(
      [closed, http, banner, silent].map(async ({ port }, i) => {
        const answer = await boltSource(`reach${i}`, `bolt://127.0.0.1:${port}`);
        return { status: answer.status, body: answer.body };
      }),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer).toEqual({ status: answers[0]!.status, body: { key: answers[0]!.body.key, message: `graph: ${unreachableMessage(`data source "reach${i}"`)}` } });
    }
    // The allowed ones were reached: what they said is in the log only.
    expect([http, banner, silent].map((l) => l.connections() > 0)).toEqual([true, true, true]);
  }, 40_000);
});
