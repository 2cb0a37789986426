import { describe, expect, it } from 'vitest';
import { ConfigError, readProcessConfig, trustProxyFrom } from '../../src/env.js';
import { ADMIN_PASSWORD, ApiClient, type TestService, useTestService } from '../support/test-service.js';

const signIn = (t: TestService, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, headers, payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
const wrongSignIn = (t: TestService, remoteAddress: string, login: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, headers, payload: { usernameOrEmail: login, password: 'wrong-password' } });
const sessionCookie = (response: Awaited<ReturnType<typeof signIn>>) => response.cookies.find((c) => c.name === 'aw.sid')!;

describe('TRUST_PROXY: the forms it takes', () => {
  it('reads false, true, a hop count and a list of addresses and CIDRs', () => {
    expect(trustProxyFrom(undefined)).toBe(false);
    expect(trustProxyFrom('')).toBe(false);
    expect(trustProxyFrom('false')).toBe(false);
    expect(trustProxyFrom('0')).toBe(false);
    expect(trustProxyFrom('true')).toBe(true);
    expect(trustProxyFrom(' 127.0.0.1, 10.0.0.0/8,::1 , fd00::/8,loopback')).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback']);
    const hops = trustProxyFrom('2');
    expect(typeof hops).toBe('function');
    const trust = hops as (address: string, hop: number) => boolean;
    expect([trust('203.0.113.1', 0), trust('203.0.113.1', 1), trust('203.0.113.1', 2)]).toEqual([true, true, false]);
  });

  it('refuses anything else at start, naming the variable and the entry', () => {
    for (const bad of ['yes', '10.0.0.0/33', '::1/129', '127.0.0.1,', 'proxy.example.com', '-1', '101']) {
      expect(() => readProcessConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
      expect(() => readProcessConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });
});

describe('TRUST_PROXY unset (the default): forwarded headers are ignored', () => {
  // PUBLIC_BASE_URL is https (the test service's default): the cookie must follow the request, not it.
  const t = useTestService();

  it('sets a cookie that is not Secure on a plain-http request, and the next call with it works', async () => {
    const response = await signIn(t, '127.0.0.1');
    expect(response.statusCode).toBe(200);
    const cookie = sessionCookie(response);
    expect(cookie.secure).toBeFalsy();
    const me = await new ApiClient(t.app, { cookie: `aw.sid=${cookie.value}` }).get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('admin');
  });

  it('ignores X-Forwarded-Proto from a peer that is not a trusted proxy', async () => {
    expect(sessionCookie(await signIn(t, '127.0.0.1', { 'x-forwarded-proto': 'https' })).secure).toBeFalsy();
  });
});

describe('TRUST_PROXY=127.0.0.1: forwarded headers count from that proxy only', () => {
  const t = useTestService({ env: { TRUST_PROXY: '127.0.0.1', LOGIN_FAILURES_PER_ADDRESS: '3' } });

  it('marks the cookie Secure when the trusted proxy says the request came over https', async () => {
    const response = await signIn(t, '127.0.0.1', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.1' });
    expect(response.statusCode).toBe(200);
    expect(sessionCookie(response).secure).toBe(true);
    // The proxy saying http: not Secure.
    expect(sessionCookie(await signIn(t, '127.0.0.1', { 'x-forwarded-proto': 'http' })).secure).toBeFalsy();
  });

  it('ignores X-Forwarded-Proto from any other peer', async () => {
    expect(sessionCookie(await signIn(t, '203.0.113.60', { 'x-forwarded-proto': 'https' })).secure).toBeFalsy();
  });

  it("counts sign-in failures under the client address the trusted proxy forwards", async () => {
    // Each forwarded client is counted on its own: 5 clients, 1 failure each, all 401 (the socket alone would be 429 by the 4th).
    for (let i = 0; i < 5; i++) expect((await wrongSignIn(t, '127.0.0.1', `rot-${i}`, { 'x-forwarded-for': `198.51.100.${10 + i}` })).statusCode).toBe(401);
    // One forwarded client over its limit of 3 is refused, named by its own address.
    const statuses = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await wrongSignIn(t, '127.0.0.1', `one-${i}`, { 'x-forwarded-for': '198.51.100.77' });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(last!.json().message).toContain('198.51.100.77');
  });

  it('counts a peer that is not the proxy under its own address, whatever X-Forwarded-For it sends', async () => {
    const statuses = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await wrongSignIn(t, '203.0.113.61', `direct-${i}`, { 'x-forwarded-for': `192.0.2.${i + 1}` });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(last!.json().message).toContain('203.0.113.61');
  });
});

describe('TRUST_PROXY=1: one hop in front of the service is trusted, whoever it is', () => {
  const t = useTestService({ env: { TRUST_PROXY: '1' } });

  it('takes the protocol from that hop (Fastify alone would silently trust nothing for a number)', async () => {
    expect(sessionCookie(await signIn(t, '203.0.113.70', { 'x-forwarded-proto': 'https' })).secure).toBe(true);
    expect(sessionCookie(await signIn(t, '203.0.113.70')).secure).toBeFalsy();
  });
});
