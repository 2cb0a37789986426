import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliverySender, parseRetryAfter, type SendFailed } from '../../src/delivery/sender.js';
import type { AddressResolver } from '../../src/network/guarded-connector.js';
import { parseReceiverPolicy } from '../../src/network/receiver-policy.js';
import { signPayload } from '../../src/delivery/signer.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/delivery/verify.js';
import { REPO_ROOT } from '../support/processes.js';
import { fixedResolver } from '../support/fixed-resolver.js';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface TestServer {
  url: string;
  requests: Received[];
  /** Accepted TCP connections. */
  connections: () => number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

const servers: Server[] = [];
const senders: DeliverySender[] = [];

afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.close()));
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

function newSender(options?: ConstructorParameters<typeof DeliverySender>[0]): DeliverySender {
  const sender = new DeliverySender(options);
  senders.push(sender);
  return sender;
}

async function listen(server: Server, handler: Handler, scheme = 'http'): Promise<TestServer> {
  const requests: Received[] = [];
  let connections = 0;
  server.on('connection', () => connections++);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `${scheme}://127.0.0.1:${port}`, requests, connections: () => connections };
}

function startServer(handler: Handler): Promise<TestServer> {
  return listen(createServer(), handler);
}

const secret = 'whsec-test-secret';
const body = '{"eventType":"ping","data":{"webhookId":7,"note":"café ☕"}}';

function request(url: string, timeoutMs = 5000): { url: string; body: string; headers: Record<string, string>; timeoutMs: number } {
  return { url, body, headers: { ...signPayload(secret, 42, Math.floor(Date.now() / 1000), body) }, timeoutMs };
}

describe('DeliverySender', () => {
  it('POSTs the exact body with JSON content type, user agent and the given headers; 204 is ok', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const req = request(`${server.url}/hooks/in?a=1&b=two`);
    const outcome = await newSender().send(req);

    expect(outcome).toMatchObject({ ok: true, responseStatus: 204 });
    expect(outcome).not.toHaveProperty('error');
    expect(outcome.responseBody).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);

    expect(server.requests).toHaveLength(1);
    const got = server.requests[0] as Received;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hooks/in?a=1&b=two');
    expect(got.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got.headers['user-agent']).toMatch(/^alert-webhooks\/\d+\.\d+\.\d+/);
    expect(got.headers['x-payload-hmac']).toBe(req.headers['x-payload-hmac']);
    expect(got.headers['webhook-id']).toBe('42');
    expect(got.headers['webhook-signature']).toBe(req.headers['webhook-signature']);
    expect(verifyPayloadHmac(secret, got.body, got.headers['x-payload-hmac'])).toBe(true);
    expect(verifyStandardWebhook(secret, got.body, got.headers)).toBe(true);
  });

  it('records the exchange: the headers sent as received, the answer headers and the time to first byte', async () => {
    const server = await startServer((_req, res) => {
      res.setHeader('x-request-id', 'r-1');
      res.setHeader('vary', ['accept', 'origin']);
      res.setHeader('set-cookie', ['session=receivers-own-token; HttpOnly']);
      setTimeout(() => res.writeHead(202, { 'content-type': 'text/plain' }).end('queued'), 30);
    });
    const outcome = await newSender().send(request(server.url));
    const got = server.requests[0] as Received;
    expect(outcome.requestHeaders).toEqual({
      'x-payload-hmac': got.headers['x-payload-hmac'],
      'webhook-id': '42',
      'webhook-timestamp': got.headers['webhook-timestamp'],
      'webhook-signature': got.headers['webhook-signature'],
      'content-type': 'application/json',
      'user-agent': got.headers['user-agent'],
    });
    expect(outcome.responseHeaders).toMatchObject({ 'x-request-id': 'r-1', vary: 'accept, origin', 'content-type': 'text/plain', 'set-cookie': '(not recorded)' });
    expect(JSON.stringify(outcome)).not.toContain('receivers-own-token');
    expect(outcome).not.toHaveProperty('responseHeadersTruncated');
    expect(outcome.timeToFirstByteMs).toBeGreaterThanOrEqual(25);
    expect(outcome.timeToFirstByteMs).toBeLessThanOrEqual(outcome.durationMs);
  });

  it('bounds the answer headers it records, and stores no U+0000 from the body (jsonb refuses it)', async () => {
    const server = await startServer((_req, res) => {
      for (let i = 0; i < 60; i++) res.setHeader(`x-h${i}`, 'v'.repeat(i === 0 ? 2_000 : 10));
      res.writeHead(500).end('before\u0000after');
    });
    const outcome = await newSender().send(request(server.url));
    const headers = outcome.responseHeaders!;
    expect(Object.keys(headers).length).toBeLessThanOrEqual(40);
    expect(headers['x-h0']).toBe(`${'v'.repeat(512)}…`);
    expect(outcome.responseHeadersTruncated).toBe(true);
    expect(outcome.responseBody).toBe('before\uFFFDafter');
  });

  it('says when the body was longer than what it kept', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('x'.repeat(5_000)));
    expect(await newSender().send(request(server.url))).toMatchObject({ ok: true, responseBodyTruncated: true });
  });

  it('takes a custom user agent', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('thanks'));
    const outcome = await newSender({ userAgent: 'custom/1' }).send(request(server.url));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: 'thanks' });
    expect(server.requests[0]?.headers['user-agent']).toBe('custom/1');
  });

  it('fails on a 500 and keeps the response body', async () => {
    const server = await startServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom: database down'));
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 500, error: 'receiver answered 500', responseBody: 'boom: database down' });
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  it('keeps only the first 4096 bytes of a 10 KB response and still reuses the connection', async () => {
    const big = Array.from({ length: 10_240 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big));
    const sender = newSender();
    const outcome = await sender.send(request(server.url));
    expect(outcome.ok).toBe(true);
    expect(Buffer.byteLength(outcome.responseBody ?? '')).toBe(4096);
    expect(outcome.responseBody).toBe(big.slice(0, 4096));

    const again = await sender.send(request(server.url));
    expect(again.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(server.connections()).toBe(1);
  });

  it('does not cut a multi-byte character in half at the 4 KiB limit', async () => {
    const text = `${'a'.repeat(4095)}é and more`;
    const server = await startServer((_req, res) => res.writeHead(400).end(text));
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, error: 'receiver answered 400', responseBody: 'a'.repeat(4095) });
  });

  it('does not read an endless response: it closes that connection instead', async () => {
    let resolveClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const server = await startServer((_req, res) => {
      res.on('close', resolveClosed);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    const outcome = await newSender().send(request(server.url, 10_000));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200 });
    expect(outcome.responseBody).toBe('x'.repeat(4096));
    await closed; // the receiver sees the connection go away (else this test times out)
  });

  it('times out when the receiver never answers', async () => {
    const server = await startServer(() => undefined);
    const outcome = await newSender().send(request(server.url, 1000));
    expect(outcome).toMatchObject({ ok: false, error: 'timed out after 1000 ms' });
    expect(outcome.responseStatus).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('times out when the response body stalls before 4 KiB', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const outcome = await newSender().send(request(server.url, 1000));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 200, error: 'timed out after 1000 ms' });
  });

  it('ends an attempt at its deadline when the receiver trickles its answer (1 byte every 150 ms)', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 150);
      res.on('close', () => clearInterval(timer));
    });
    const outcome = await newSender().send(request(server.url, 1000));
    // Each gap between bytes is far shorter than the time-out: only a total deadline ends this.
    expect(outcome).toMatchObject({ ok: false, responseStatus: 200, error: 'timed out after 1000 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(1000);
    expect(outcome.durationMs).toBeLessThan(3000);
  });

  it('keeps a trickling answer after its first 4 KiB only until the deadline, and stands by what it kept', async () => {
    let resolveClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const server = await startServer((_req, res) => {
      res.on('close', resolveClosed);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('k'.repeat(4096));
      // The rest is short enough to be drained for keep-alive, but it never ends.
      const timer = setInterval(() => res.write('.'), 150);
      res.on('close', () => clearInterval(timer));
    });
    const outcome = await newSender().send(request(server.url, 1000));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: 'k'.repeat(4096) });
    expect(outcome.durationMs).toBeLessThan(3000);
    await closed; // the connection was cut, not left draining (else this test times out)
  });

  it('takes the answer after an informational one (103 Early Hints, then 201)', async () => {
    const server = await startServer((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.writeHead(201, { 'content-type': 'text/plain' }).end('created');
    });
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 201, responseBody: 'created' });
  });

  it('fails with the status when the connection closes before the body ends, and sends again on a new one', async () => {
    let first = true;
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      if (first) {
        first = false;
        res.write('partial', () => req.socket.destroy());
      } else {
        res.end('x'.repeat(100));
      }
    });
    const sender = newSender();
    const outcome = await sender.send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 200, error: 'connection reset' });
    const again = await sender.send(request(server.url));
    expect(again).toMatchObject({ ok: true, responseStatus: 200, responseBody: 'x'.repeat(100) });
    expect(server.connections()).toBe(2);
  });

  it('reports a refused connection', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const outcome = await newSender().send(request(`http://127.0.0.1:${port}/hook`));
    expect(outcome).toMatchObject({ ok: false, error: 'connection refused' });
    // Tried with these headers; no answer, so no answer headers and no first byte.
    expect(outcome.requestHeaders?.['webhook-id']).toBe('42');
    expect(outcome).not.toHaveProperty('responseHeaders');
    expect(outcome).not.toHaveProperty('timeToFirstByteMs');
  });

  it('reports a reset connection', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, error: 'connection reset' });
  });

  it('reports a failed DNS lookup', async () => {
    const outcome = await newSender().send(request('http://no-such-host.invalid/hook'));
    expect(outcome).toMatchObject({ ok: false, error: 'DNS lookup failed for no-such-host.invalid' });
  });

  it('reports a self-signed TLS certificate', async () => {
    const server = await listen(createTlsServer({ key: TEST_KEY, cert: TEST_CERT }), (_req, res) => res.writeHead(204).end(), 'https');
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, error: 'TLS: self-signed certificate' });
    expect(server.requests).toHaveLength(0);
  });

  describe('with a CA the sender trusts', () => {
    const tls = (name: string) => readFileSync(path.join(REPO_ROOT, 'test/support/tls', name), 'utf8');
    const trusting = () => newSender({ extraCaCertificates: tls('ca.pem') });
    const receiver = (cert: string) => listen(createTlsServer({ key: tls('receiver.key'), cert: tls(cert) }), (_req, res) => res.writeHead(204).end(), 'https');

    it('delivers to a receiver whose certificate it signed', async () => {
      const server = await receiver('valid.pem');
      expect(await trusting().send(request(server.url))).toMatchObject({ ok: true, responseStatus: 204 });
      // The bundled roots are not all it trusts otherwise: without the CA, the same receiver is refused.
      expect(await newSender().send(request(server.url))).toMatchObject({ ok: false, error: 'TLS: unable to verify the certificate' });
    });

    it('reports an expired certificate', async () => {
      const server = await receiver('expired.pem');
      expect(await trusting().send(request(server.url))).toMatchObject({ ok: false, error: 'TLS: certificate has expired' });
      expect(server.requests).toHaveLength(0);
    });

    it('reports a certificate for another host name', async () => {
      const server = await receiver('other-host.pem');
      expect(await trusting().send(request(server.url))).toMatchObject({ ok: false, error: 'TLS: certificate does not match the host name' });
      expect(server.requests).toHaveLength(0);
    });
  });

  it('never follows a redirect', async () => {
    const target = await startServer((_req, res) => res.writeHead(204).end());
    const server = await startServer((_req, res) => res.writeHead(302, { location: `${target.url}/elsewhere` }).end());
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 302, error: 'receiver answered 302 (redirects are not followed)' });
    expect(server.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    expect(target.connections()).toBe(0);
  });

  it('reads Retry-After in seconds on a 503', async () => {
    const server = await startServer((_req, res) => res.writeHead(503, { 'retry-after': '7' }).end());
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 503, error: 'receiver answered 503', retryAfterMs: 7000 });
  });

  it('reads Retry-After as an HTTP date on a 429', async () => {
    const server = await startServer((_req, res) =>
      res.writeHead(429, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }).end(),
    );
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 429, error: 'receiver answered 429' });
    const { retryAfterMs } = outcome as SendFailed;
    expect(retryAfterMs).toBeGreaterThan(100_000);
    expect(retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it('ignores Retry-After on other statuses', async () => {
    const server = await startServer((_req, res) => res.writeHead(500, { 'retry-after': '7' }).end());
    const outcome = await newSender().send(request(server.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 500 });
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  it('reuses one keep-alive connection for sequential sends to one origin', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const sender = newSender();
    const first = await sender.send(request(`${server.url}/a`));
    const second = await sender.send(request(`${server.url}/b`));
    expect(first.ok).toBe(true);
    expect(second.ok).toBe(true);
    expect(server.requests.map((r) => r.url)).toEqual(['/a', '/b']);
    expect(server.connections()).toBe(1);
  });

  it('never throws: a bad URL or a closed sender is a failed outcome', async () => {
    const sender = newSender();
    await expect(sender.send(request('not a url'))).resolves.toMatchObject({ ok: false, error: 'request failed: invalid URL' });
    await expect(sender.send(request('ftp://127.0.0.1/x'))).resolves.toMatchObject({
      ok: false,
      error: 'request failed: unsupported protocol ftp:',
    });
    await sender.close();
    await expect(sender.send(request('http://127.0.0.1:9/x'))).resolves.toMatchObject({
      ok: false,
      error: 'request failed: sender is closed',
    });
  });
});

// Network safety: every receiver here listens on loopback and every test resolver answers loopback addresses only, so
// a guard that failed to refuse would still reach nothing but this machine.
describe('DeliverySender under a receiver policy', () => {
  const denyLoopback = parseReceiverPolicy({ RECEIVER_DENY: '127.0.0.0/8,::1/128' });
  const portOf = (url: string) => new URL(url).port;

  it('refuses a denied address before connecting: a failed attempt naming the address and the rule', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const sender = newSender({ receiverPolicy: denyLoopback });
    const outcome = await sender.send(request(`${server.url}/hook`));
    expect(outcome).toEqual({ ok: false, error: 'blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)', blocked: true, durationMs: expect.any(Number),
      // The request it would have made: no connection, so no answer.
      requestHeaders: expect.objectContaining({ 'webhook-id': '42' }),
    });
    // Another spelling of the same address (URL parsing reads 0x7f000001 as 127.0.0.1) is refused the same way.
    const hex = await sender.send(request(`http://0x7f000001:${portOf(server.url)}/hook`));
    expect(hex).toMatchObject({ ok: false, error: 'blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)', blocked: true });
    expect(server.connections()).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a host name whose addresses are all denied, at connect time, and sends again once allowed', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const url = `http://receiver.test:${portOf(server.url)}/hook`;
    const resolver = fixedResolver('receiver.test', ['127.0.0.1']);
    const blocked = await newSender({ receiverPolicy: denyLoopback, resolveAddresses: resolver }).send(request(url));
    expect(blocked).toMatchObject({ ok: false, error: 'blocked by receiver policy: 127.0.0.1 (127.0.0.0/8 RECEIVER_DENY)', blocked: true });
    expect(resolver.calls).toBe(1);
    expect(server.connections()).toBe(0);

    // The default policy allows loopback: the same name reaches the address it resolved to, the Host header kept.
    const sent = await newSender({ resolveAddresses: resolver }).send(request(url));
    expect(sent).toMatchObject({ ok: true, responseStatus: 204 });
    expect(sent).not.toHaveProperty('blocked');
    expect(server.requests.map((r) => r.headers.host)).toEqual([`receiver.test:${portOf(server.url)}`]);
  });

  it('keeps the connect phase, name resolution included, within the attempt deadline', async () => {
    const hanging: AddressResolver = () => new Promise(() => undefined); // a resolver that never answers
    const outcome = await newSender({ resolveAddresses: hanging }).send(request('http://receiver.test:9/hook', 1000));
    expect(outcome).toMatchObject({ ok: false, error: 'timed out after 1000 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(900);
    expect(outcome.durationMs).toBeLessThan(3000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:00:00.000Z');

  it('reads seconds and HTTP dates, capped at 24 h', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter(['30', '60'], now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('999999', now)).toBe(86_400_000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 10:00:00 GMT', now)).toBe(86_400_000);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });
});

// A throwaway self-signed certificate for CN=localhost / 127.0.0.1 (P-256, valid to 2126), used only by the TLS test.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXaIN2VZQ0z6inzz5
yGAcRam2W3z/0qmcFP4SCJxlniahRANCAATO5v6Y111vq6Y543Kj5akvv30uL5sQ
CF2ZpFghwVp/c58j8gH6/wq/46P50gtsKPJdAWcomcWxzGG6b3JmEF3Y
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUAzx/4v7Ov+DuMlhQUP5dGX0SFxQwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMjE1MjMzMloYDzIxMjYxMDI5
MTUyMzMyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATO5v6Y111vq6Y543Kj5akvv30uL5sQCF2ZpFghwVp/c58j8gH6/wq/
46P50gtsKPJdAWcomcWxzGG6b3JmEF3Yo28wbTAdBgNVHQ4EFgQUhKdQmOX8KwXp
DYdzfcUjq1VqhycwHwYDVR0jBBgwFoAUhKdQmOX8KwXpDYdzfcUjq1VqhycwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSAAwRQIhAJ51b4FKcpo4fjHwmaj5udKDfE4e28rldvTQc4Davp1eAiBP
+fKpnvROKF0ErCo0GES5zQ6MWCiAU2GC2lbPcAMECg==
-----END CERTIFICATE-----
`;
