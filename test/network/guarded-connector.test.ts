import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { guardedConnector, guardedLookup, type AddressResolver } from '../../src/network/guarded-connector.js';
import { RECEIVER_BLOCKED } from '../../src/network/receiver-blocked.js';
import { parseReceiverPolicy, type ReceiverPolicySettings } from '../../src/network/receiver-policy.js';
import { fixedResolver } from '../support/fixed-resolver.js';

// Network safety: every server here listens on loopback and every resolver answers loopback addresses only, so a
// guard that fails to refuse still reaches nothing but this machine.

const TLS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'support', 'tls');
const tlsFile = (name: string) => readFileSync(path.join(TLS_DIR, name), 'utf8');

/** A loopback server that counts the TCP connections it accepts and the requests it answers (204). */
class CountingServer {
  connections = 0;
  readonly requests: { host: string | undefined }[] = [];

  private constructor(readonly server: Server) {
    server.on('connection', () => this.connections++);
    server.on('request', (req, res) => {
      this.requests.push({ host: req.headers.host });
      req.resume().on('end', () => res.writeHead(204).end());
    });
  }

  static async start(host: string, port = 0, tls?: { cert: string; key: string }): Promise<CountingServer> {
    const server = tls === undefined ? createServer() : createTlsServer(tls);
    const counting = new CountingServer(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
    return counting;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const pools: Pool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.destroy()));
});

/** One POST through a Pool whose connections go through the guard; resolves to the status or rejects. */
async function post(origin: string, settings: ReceiverPolicySettings, extra: { resolve?: AddressResolver; ca?: string[] } = {}): Promise<number> {
  const pool = new Pool(origin, { connect: guardedConnector({ policy: parseReceiverPolicy(settings), timeout: 5000, ...extra }) });
  pools.push(pool);
  const response = await pool.request({ method: 'POST', path: '/hook', body: '{}', headers: { 'content-type': 'application/json' } });
  await response.body.dump();
  return response.statusCode;
}

/** The error a request failed with (fails the test when it did not fail). */
async function failureOf(request: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await request;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('the request succeeded');
}

const DENY_LOOPBACK = { RECEIVER_DENY: '127.0.0.0/8,::1/128' };

describe('a receiver reached over http', () => {
  let receiver: CountingServer;
  beforeAll(async () => {
    receiver = await CountingServer.start('127.0.0.1');
  });
  afterAll(() => receiver.close());
  afterEach(() => {
    receiver.connections = 0;
    receiver.requests.length = 0;
  });

  it('is refused at connect time when its address is denied, and sees no connection', async () => {
    const error = await failureOf(post(`http://127.0.0.1:${receiver.port}`, DENY_LOOPBACK));
    expect(error.code).toBe(RECEIVER_BLOCKED);
    expect(error.message).toBe('blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)');
    expect(receiver.connections).toBe(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it('is refused when its host name resolves to denied addresses only (localhost)', async () => {
    const error = await failureOf(post(`http://localhost:${receiver.port}`, DENY_LOOPBACK));
    expect(error.code).toBe(RECEIVER_BLOCKED);
    expect(error.message).toMatch(/^blocked by receiver policy: (127\.0\.0\.1 \(127\.0\.0\.0\/8|::1 \(::1\/128) RECEIVER_DENY\)$/);
    expect(receiver.connections).toBe(0);
  });

  it('is refused in its IPv6 and IPv4-mapped spellings', async () => {
    const mapped = await failureOf(post(`http://[::ffff:127.0.0.1]:${receiver.port}`, DENY_LOOPBACK));
    expect(mapped.message).toBe('blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)');
    const v6 = await failureOf(post(`http://[::1]:${receiver.port}`, DENY_LOOPBACK));
    expect(v6.message).toBe('blocked by receiver policy: ::1 (::1/128 RECEIVER_DENY)');
    // 0x7f000001 is 127.0.0.1 by the time undici has parsed the URL
    const hex = await failureOf(post(`http://0x7f000001:${receiver.port}`, DENY_LOOPBACK));
    expect(hex.message).toBe('blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)');
    expect(receiver.connections).toBe(0);
  });

  it('is reached under the default policy, by address and by name', async () => {
    expect(await post(`http://127.0.0.1:${receiver.port}`, {})).toBe(204);
    expect(await post(`http://localhost:${receiver.port}`, {})).toBe(204);
    expect(receiver.requests).toHaveLength(2);
  });

  it('is reached at the address the guard resolved, resolving once, with the Host header kept', async () => {
    const resolver = fixedResolver('receiver.test', ['127.0.0.1']);
    expect(await post(`http://receiver.test:${receiver.port}`, {}, { resolve: resolver })).toBe(204);
    expect(resolver.calls).toBe(1);
    expect(receiver.requests).toEqual([{ host: `receiver.test:${receiver.port}` }]);
  });

  it('passes a name that does not resolve through as the resolver said (ENOTFOUND)', async () => {
    const error = await failureOf(post(`http://nowhere.test:${receiver.port}`, {}, { resolve: fixedResolver('receiver.test', ['127.0.0.1']) }));
    expect(error.code).toBe('ENOTFOUND');
    expect(receiver.connections).toBe(0);
  });
});

describe('a name with denied and allowed addresses', () => {
  // Two loopback servers on one port: the decoy at 127.0.0.2 stands for an address the policy denies.
  let decoy: CountingServer;
  let receiver: CountingServer;
  beforeAll(async () => {
    decoy = await CountingServer.start('127.0.0.2');
    receiver = await CountingServer.start('127.0.0.1', decoy.port);
  });
  afterAll(() => Promise.all([decoy.close(), receiver.close()]));

  it('connects only to an allowed address, never to the denied one listed first', async () => {
    const resolver = fixedResolver('receiver.test', ['127.0.0.2', '127.0.0.1']);
    expect(await post(`http://receiver.test:${receiver.port}`, { RECEIVER_DENY: '127.0.0.2/32' }, { resolve: resolver })).toBe(204);
    expect(decoy.connections).toBe(0);
    expect(receiver.requests).toHaveLength(1);
    expect(resolver.calls).toBe(1);
  });

  it('names the first denied address when none is allowed', async () => {
    const resolver = fixedResolver('receiver.test', ['127.0.0.2']);
    const error = await failureOf(post(`http://receiver.test:${decoy.port}`, { RECEIVER_DENY: '127.0.0.2/32' }, { resolve: resolver }));
    expect(error.message).toBe('blocked by receiver policy: 127.0.0.2 (127.0.0.2/32 RECEIVER_DENY)');
    expect(decoy.connections).toBe(0);
  });
});

describe('a receiver reached over https', () => {
  const ca = [tlsFile('ca.pem')];
  const key = tlsFile('receiver.key');
  let valid: CountingServer;
  let otherHost: CountingServer;
  beforeAll(async () => {
    valid = await CountingServer.start('127.0.0.1', 0, { cert: tlsFile('valid.pem'), key });
    otherHost = await CountingServer.start('127.0.0.1', 0, { cert: tlsFile('other-host.pem'), key });
  });
  afterAll(() => Promise.all([valid.close(), otherHost.close()]));

  it('verifies the certificate against the host name, not the address connected to', async () => {
    expect(await post(`https://localhost:${valid.port}`, {}, { ca })).toBe(204);
    // other-host.pem names other.example only: reached at 127.0.0.1 under that name, it verifies
    expect(await post(`https://other.example:${otherHost.port}`, {}, { ca, resolve: fixedResolver('other.example', ['127.0.0.1']) })).toBe(204);
    // valid.pem names localhost and 127.0.0.1, the very address connected to, but not receiver.test: refused
    const mismatch = await failureOf(post(`https://receiver.test:${valid.port}`, {}, { ca, resolve: fixedResolver('receiver.test', ['127.0.0.1']) }));
    expect(mismatch.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('still refuses a denied address before any handshake', async () => {
    const before = valid.connections;
    const error = await failureOf(post(`https://localhost:${valid.port}`, DENY_LOOPBACK, { ca }));
    expect(error.code).toBe(RECEIVER_BLOCKED);
    expect(valid.connections).toBe(before);
  });
});

describe('the guarded lookup', () => {
  const lookup = (all: boolean, family: 0 | 4 | 6, addresses: string[]) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: number | undefined }>((resolve) => {
      guardedLookup(parseReceiverPolicy({ RECEIVER_DENY: '127.0.0.2/32' }), fixedResolver('receiver.test', addresses))(
        'receiver.test',
        { all, family },
        (error, address, addressFamily) => resolve({ error, address, family: addressFamily }),
      );
    });

  it('answers in the form net asks for: every allowed address, or the first one', async () => {
    expect(await lookup(true, 0, ['127.0.0.2', '127.0.0.1', '::1'])).toMatchObject({
      error: null,
      address: [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    expect(await lookup(false, 4, ['127.0.0.2', '127.0.0.1'])).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    const refused = await lookup(false, 0, ['127.0.0.2']);
    expect(refused.error?.code).toBe(RECEIVER_BLOCKED);
    expect((await lookup(true, 0, [])).error?.code).toBe('ENOTFOUND');
  });
});
