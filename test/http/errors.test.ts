import { maxHeaderSize } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { readProcessConfig } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { createWebhook } from '../support/fixtures.js';
import { rawRequest } from '../support/raw-http.js';
import { useTestService } from '../support/test-service.js';

describe('errors (docs/api.md, Errors)', () => {
  const t = useTestService();
  const adminHeaders = () => (t.admin as unknown as { headers: Record<string, string> }).headers;

  it('answers an unknown route with 404 api_not_found', async () => {
    const response = await t.admin.get('/api/no/such/route?x=1');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ key: 'api_not_found', message: 'There is no route GET /api/no/such/route' });
  });

  it('names the field an error is about, from a schema check and from a domain rule alike', async () => {
    const missing = await t.admin.post('/api/admin/users', { email: 'a@example.com', password: 'long-enough-password' });
    expect(missing.body).toEqual({ key: 'invalid_parameter', message: 'field username is required', field: 'username' });
    const nested = await t.admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:9/hook', secret: 'test-webhook-secret', events: [{ eventType: 'nope' }] });
    expect(nested.body).toMatchObject({ key: 'invalid_parameter', field: 'events[0].eventType' });
    const rule = await t.admin.post('/api/admin/webhooks', { url: 'not a url', secret: 'test-webhook-secret' });
    expect(rule.body).toEqual({ key: 'invalid_parameter', message: 'url "not a url" is not an absolute URL', field: 'url' });
    const setting = await t.admin.post('/api/config', { path: 'webhooks', configuration: { retryScheduleMs: [1000, -1] } });
    expect(setting.body).toMatchObject({ key: 'invalid_parameter', field: 'webhooks.retryScheduleMs[1]' });
    // No field: the body as a whole.
    const whole = await t.admin.request('POST', '/api/admin/users', '{"username": "x",', { 'content-type': 'application/json' });
    expect(whole.body).not.toHaveProperty('field');
  });

  it('answers malformed JSON with 400 invalid_parameter', async () => {
    const response = await t.admin.request('POST', '/api/admin/users', '{"username": "x",', { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(response.body.key).toBe('invalid_parameter');
    expect(response.body.message).toMatch(/^the body is not valid JSON/);
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const big = JSON.stringify({ username: 'x'.repeat(1024 * 1024 + 10), email: 'a@b', password: 'p' });
    const response = await t.admin.request('POST', '/api/admin/users', big, { 'content-type': 'application/json' });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ key: 'payload_too_large', message: 'the request body is larger than the limit of 1048576 bytes' });
  });

  it('answers a body that is not JSON with 415 invalid_parameter', async () => {
    const response = await t.admin.request('POST', '/api/admin/users', 'username=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({ key: 'invalid_parameter', message: 'the body must be application/json, got application/x-www-form-urlencoded' });
  });

  it('answers what the router refuses with {key, message}: a bad percent-encoding, an over-long parameter', async () => {
    const badUrl = await t.admin.get('/api/%zz/alerts');
    expect(badUrl.status).toBe(400);
    expect(badUrl.body).toEqual({ key: 'invalid_parameter', message: 'the path "/api/%zz/alerts" is not valid: every % must be followed by two hex digits of UTF-8' });
    const tooLong = await t.admin.get(`/api/${'a'.repeat(1100)}/alerts`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.key).toBe('invalid_parameter');
    expect(tooLong.body.message).toMatch(/^a path parameter of ".*…" is longer than 1024 characters$/);
    // Below the router's limit, the route's schema answers, naming the parameter.
    const long = await t.admin.get(`/api/${'a'.repeat(200)}/alerts`);
    expect(long.body).toEqual({ key: 'invalid_parameter', message: 'path parameter sourceKey must match ^[A-Za-z0-9_-]{1,64}$', field: 'sourceKey' });
  });

  it('answers what Node\'s HTTP parser refuses with {key, message}: headers too large (431), not HTTP (400)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const huge = await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(maxHeaderSize + 1000)}\r\nConnection: close\r\n\r\n`);
    expect(huge.status).toBe(431);
    expect(huge.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(huge.body)).toEqual({ key: 'invalid_parameter', message: `the request line and headers are larger than the limit of ${maxHeaderSize} bytes` });
    const garbage = await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toMatchObject({ key: 'invalid_parameter', message: expect.stringMatching(/^the request is not valid HTTP\/1\.1 \(HPE_/) });
  });

  it('answers 415 to any body that is not JSON, on every route, including routes that read no body', async () => {
    const hook = await createWebhook(t.admin);
    const cases: [string, string, string][] = [
      // A cross-site HTML form can send these three without a preflight: none may act.
      [`/api/admin/webhooks/${hook.id}/ping`, 'text/plain', 'ping'],
      [`/api/admin/webhooks/${hook.id}/deliveries/1/redeliver`, 'application/x-www-form-urlencoded', 'a=1'],
      ['/api/auth/login', 'multipart/form-data; boundary=x', '--x--'],
      ['/api/admin/users', 'application/json-patch+json', '{}'],
      ['/api/admin/users', 'application/json; charset=utf-16', '{}'],
    ];
    for (const [url, contentType, body] of cases) {
      const response = await t.admin.request('POST', url, body, { 'content-type': contentType });
      expect(response.status, `${contentType} to ${url}`).toBe(415);
      expect(response.body.key).toBe('invalid_parameter');
      expect(Object.keys(response.body).sort()).toEqual(['key', 'message']);
    }
    // A body with no Content-Type at all is refused too.
    const untyped = await t.app.inject({ method: 'POST', url: `/api/admin/webhooks/${hook.id}/ping`, headers: { ...adminHeaders(), 'content-length': '4' }, payload: 'ping' });
    expect(untyped.statusCode).toBe(415);
    // Nothing was sent.
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).body.totalCount).toBe(0);
  });

  it('still takes a POST with no body, or an empty JSON one, on routes that read none', async () => {
    const hook = await createWebhook(t.admin);
    const bare = await t.app.inject({ method: 'POST', url: `/api/admin/webhooks/${hook.id}/ping`, headers: adminHeaders() });
    expect(bare.statusCode).toBe(200);
    const emptyJson = await t.admin.request('POST', `/api/admin/webhooks/${hook.id}/ping`, '', { 'content-type': 'application/json' });
    expect(emptyJson.status).toBe(200);
    const utf8 = await t.admin.request('POST', `/api/admin/webhooks/${hook.id}/ping`, '{}', { 'content-type': 'application/json; charset=UTF-8' });
    expect(utf8.status).toBe(200);
    // Where a body is read, an empty one is an error.
    const empty = await t.admin.request('POST', '/api/admin/users', '', { 'content-type': 'application/json' });
    expect(empty.body).toEqual({ key: 'invalid_parameter', message: 'the body is empty but Content-Type is application/json: send a JSON body' });
  });

  it('refuses the keys that could pollute a prototype, as Fastify\'s own parser did', async () => {
    for (const body of ['{"__proto__":{"isAdmin":true},"username":"x"}', '{"constructor":{"prototype":{"x":1}}}']) {
      const response = await t.admin.request('POST', '/api/admin/users', body, { 'content-type': 'application/json' });
      expect(response.status, body).toBe(400);
      expect(response.body.message).toMatch(/^field (__proto__|constructor) is not allowed$/);
    }
  });

  it('answers an unexpected error with 500 bug: no stack, no SQL', async () => {
    const config = readProcessConfig({ PUBLIC_BASE_URL: 'https://lke.example.com' });
    const logged: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void logged.push(line) });
    const app = await buildApp({ db: t.db, settings: t.service.settings, config, logger, worker: t.service.engine.worker, keyring: t.service.keyring, graphs: t.service.graphs, alertRuns: t.service.alertRuns });
    app.get('/api/test/explode', { config: { access: 'public' } }, async () => {
      await t.db.query('SELECT * FROM table_that_does_not_exist');
    });
    await app.ready();
    try {
      const response = await app.inject({ method: 'GET', url: '/api/test/explode' });
      expect(response.statusCode).toBe(500);
      const body = response.json();
      expect(body.key).toBe('bug');
      expect(body.message).toMatch(/^An unexpected error occurred; the server log has the details under request id req-/);
      expect(response.body).not.toMatch(/table_that_does_not_exist|SELECT|at .*\.ts/);
      // The log has what the answer hides, under the same request id.
      const requestId = /request id (\S+)$/.exec(body.message)![1];
      expect(logged.some((line) => line.includes('table_that_does_not_exist') && line.includes(`"reqId":"${requestId}"`))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
