import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { DeclaredRoute } from '../../src/auth/authenticate.js';
import { CONSOLE_ASSETS, CONSOLE_PAGES } from '../../src/console/console.routes.js';
import { readProcessConfig } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { rawRequest } from '../support/raw-http.js';
import { ApiClient, startTestService, type TestService } from '../support/test-service.js';

/**
 * Who may call each route, pinned: a new route must be added here with its access, so a route that should need
 * Admin but is declared otherwise (outside /api/admin/, where the start-up check cannot know) fails this test.
 * HEAD twins of GET routes are Fastify's, with the same access.
 */
const EXPECTED: Record<DeclaredRoute['access'], string[]> = {
  admin: [
    'POST /api/admin/users',
    'GET /api/admin/users',
    'PATCH /api/admin/users/:id',
    'DELETE /api/admin/users/:id',
    'POST /api/admin/applications',
    'GET /api/admin/applications',
    'PATCH /api/admin/applications/:id',
    'DELETE /api/admin/applications/:id',
    'GET /api/admin/:sourceKey/groups',
    'POST /api/admin/:sourceKey/groups',
    'GET /api/admin/:sourceKey/groups/:id',
    'PATCH /api/admin/:sourceKey/groups/:id',
    'DELETE /api/admin/:sourceKey/groups/:id',
    'PUT /api/admin/:sourceKey/groups/:id/access_rights',
    'PATCH /api/admin/:sourceKey/accessRights/settings',
    'POST /api/config',
    'POST /api/admin/sources',
    'GET /api/admin/sources',
    'GET /api/admin/sources/:sourceKey',
    'PATCH /api/admin/sources/:sourceKey',
    'DELETE /api/admin/sources/:sourceKey',
    'POST /api/admin/:sourceKey/alerts',
    'GET /api/admin/:sourceKey/alerts',
    'PATCH /api/admin/:sourceKey/alerts/:alertId',
    'DELETE /api/admin/:sourceKey/alerts/:alertId',
    'POST /api/admin/:sourceKey/alerts/:alertId/matches',
    'POST /api/admin/:sourceKey/alerts/:alertId/run',
    'POST /api/admin/webhooks',
    'GET /api/admin/webhooks',
    'DELETE /api/admin/webhooks/:webhookId',
    'GET /api/admin/webhooks/:webhookId/deliveries',
    'GET /api/admin/webhooks/:webhookId/deliveries/:deliveryId',
    'GET /api/admin/webhooks/:webhookId',
    'PATCH /api/admin/webhooks/:webhookId',
    'POST /api/admin/webhooks/:webhookId/secret',
    'POST /api/admin/webhooks/:webhookId/ping',
    'POST /api/admin/webhooks/:webhookId/example',
    'POST /api/admin/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    'POST /api/admin/webhooks/:webhookId/deliveries/redeliver',
    'POST /api/admin/deliveries/redeliver',
    'GET /api/admin/deliveries/health',
    'GET /api/admin/deliveries',
    'GET /api/admin/audit',
  ],
  user: [
    'GET /api/auth/me',
    'GET /api/dataSources',
    'GET /api/:sourceKey/groups',
    'GET /api/:sourceKey/groups/:groupId/users',
    'GET /api/:sourceKey/alerts',
    'GET /api/:sourceKey/alerts/:alertId',
    'GET /api/:sourceKey/alerts/:alertId/cases',
    'GET /api/:sourceKey/alerts/:alertId/cases/:caseId',
    'POST /api/:sourceKey/alerts/:alertId/cases/:caseId/action',
    'GET /api/cases',
    'POST /api/cases/action',
    'POST /api/:sourceKey/alerts/cases/assignments',
    'POST /api/:sourceKey/alerts/:alertId/cases/assignments',
    'GET /api/:sourceKey/alerts/:alertId/users',
    'GET /api/:sourceKey/alerts/:alertId/cases/:caseId/actions',
    'GET /api/:sourceKey/alerts/:alertId/cases/:caseId/matches',
    'GET /api/:sourceKey/alerts/:alertId/runs',
    'POST /api/:sourceKey/graph/run/query',
    'GET /api/:sourceKey/graph/nodes/:id',
    'GET /api/:sourceKey/graph/edges/:id',
    'POST /api/:sourceKey/graph/nodes/:id',
    'POST /api/:sourceKey/graph/edges/:id',
    'POST /api/:sourceKey/graph/alertPreview',
  ],
  public: ['GET /health', 'GET /health/live', 'GET /health/ready', 'POST /api/auth/login', 'POST /api/auth/logout', 'GET /api/auth/logout', 'GET /api/config', 'GET /api/openapi.json', 'GET /metrics', ...[...CONSOLE_PAGES, CONSOLE_ASSETS].map((p) => `GET ${p}`)],
};

// The logout's GET has no HEAD twin: a HEAD would end the session too.
const NO_HEAD_TWIN = new Set(['GET /api/auth/logout']);
const withHeadTwins = (routes: string[]) => routes.flatMap((r) => (r.startsWith('GET ') && !NO_HEAD_TWIN.has(r) ? [r, `HEAD ${r.slice(4)}`] : [r])).sort();

/** Valid-looking values for path parameters: the guard must answer before any of them is looked up. */
const fill = (url: string) => url.replace(/:(\w+)/g, (_, name: string) => (name === 'sourceKey' ? 'src' : '1'));

/** `c` percent-encoded, in upper- or lowercase hex. */
const encode = (c: string, upper = true) => {
  const hex = c.charCodeAt(0).toString(16);
  return `%${upper ? hex.toUpperCase() : hex}`;
};

/**
 * The path as given, and variants the router reads as the same path: a letter of `api` encoded, a letter of
 * `admin` encoded (both hex cases), the whole of `admin` encoded, a letter of the last static segment encoded,
 * and a trailing slash (the router ignores it). `%2F` is not among them: the router does not decode it.
 */
function variants(path: string): string[] {
  const segments = path.split('/');
  const out = new Set<string>([path, `${path}/`]);
  const encodeAt = (segmentIndex: number, charIndex: number, upper = true) => {
    const copy = [...segments];
    const s = copy[segmentIndex]!;
    copy[segmentIndex] = s.slice(0, charIndex) + encode(s[charIndex]!, upper) + s.slice(charIndex + 1);
    return copy.join('/');
  };
  out.add(encodeAt(1, 0)); // %61pi
  out.add(encodeAt(1, 2)); // ap%69
  if (segments[2] === 'admin') {
    out.add(encodeAt(2, 0)); // %61dmin
    out.add(encodeAt(2, 3)); // adm%69n
    out.add(encodeAt(2, 2, true)); // ad%6Din
    out.add(encodeAt(2, 2, false)); // ad%6din
    out.add(['', segments[1], [...'admin'].map((c) => encode(c)).join(''), ...segments.slice(3)].join('/'));
  }
  const lastStatic = segments.findLastIndex((s, i) => i > 2 && /^[a-z]/i.test(s));
  if (lastStatic > 0) out.add(encodeAt(lastStatic, 0));
  return [...out];
}

const bodyFor = (method: string) => (method === 'POST' || method === 'PATCH' ? {} : undefined);

describe('route access: authorized on the matched route, never on the URL text (issue 8, item 1)', () => {
  let t: TestService;
  let analyst: ApiClient;
  let analystCookie: string;
  let port: number;
  const routes = (access: DeclaredRoute['access']) => t.app.declaredRoutes.filter((r) => r.access === access);

  beforeAll(async () => {
    t = await startTestService();
    const created = await t.admin.post('/api/admin/users', { username: 'ana', email: 'ana@example.com', password: 'ana-password', groups: [2] });
    expect(created.status).toBe(201);
    const login = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail: 'ana', password: 'ana-password' } });
    analystCookie = `aw.sid=${login.cookies.find((c) => c.name === 'aw.sid')!.value}`;
    analyst = new ApiClient(t.app, { cookie: analystCookie });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => t?.close());

  it('has every route declare its access, Admin on exactly the expected ones', () => {
    const declared = (access: DeclaredRoute['access']) => routes(access).map((r) => `${r.method} ${r.url}`).sort();
    expect(declared('admin')).toEqual(withHeadTwins(EXPECTED.admin));
    expect(declared('user')).toEqual(withHeadTwins(EXPECTED.user));
    expect(declared('public')).toEqual(withHeadTwins(EXPECTED.public));
    // Every /api/admin/ route of the OpenAPI document is among them (the document lists {param} for :param).
    const documented = Object.entries((t.app.swagger() as { paths: Record<string, object> }).paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(documented.filter((r) => r.includes(' /api/admin')).sort()).toEqual(EXPECTED.admin.filter((r) => r.includes(' /api/admin')).sort());
  });

  it('answers 401 without a session and 403 to an Analyst on every Admin route, plain and percent-encoded', async () => {
    let checked = 0;
    for (const route of routes('admin')) {
      for (const url of variants(fill(route.url))) {
        const where = `${route.method} ${url}`;
        const anonymous = await t.anonymous.request(route.method as 'GET', url, bodyFor(route.method));
        expect(anonymous.status, where).toBe(401);
        const refused = await analyst.request(route.method as 'GET', url, bodyFor(route.method));
        expect(refused.status, where).toBe(403);
        if (route.method !== 'HEAD') {
          expect(anonymous.body.key, where).toBe('unauthorized');
          // The message names the route's pattern, never the text of the URL.
          expect(refused.body, where).toEqual({ key: 'forbidden', message: `${route.method} ${route.url} needs the Admin group` });
        }
        checked++;
      }
    }
    expect(routes('admin').length).toBe(withHeadTwins(EXPECTED.admin).length);
    expect(checked).toBeGreaterThan(routes('admin').length * 5);
  });

  it('does the same for an absolute-form request target over a real socket (GET http://x/api/admin/users HTTP/1.1)', async () => {
    for (const route of routes('admin')) {
      for (const path of [fill(route.url), variants(fill(route.url))[2]!]) {
        const body = bodyFor(route.method) ? '{}' : '';
        const head = `${route.method} http://x${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${body ? 'Content-Type: application/json\r\nContent-Length: 2\r\n' : ''}`;
        const anonymous = await rawRequest(port, `${head}\r\n${body}`);
        expect(anonymous.status, `${route.method} http://x${path}`).toBe(401);
        const refused = await rawRequest(port, `${head}Cookie: ${analystCookie}\r\n\r\n${body}`);
        expect(refused.status, `${route.method} http://x${path} as an Analyst`).toBe(403);
        if (route.method !== 'HEAD') expect(JSON.parse(refused.body)).toEqual({ key: 'forbidden', message: `${route.method} ${route.url} needs the Admin group` });
      }
    }
  });

  it('lets an Admin through the same encoded and absolute-form paths', async () => {
    expect((await t.admin.get('/api/%61dmin/users')).status).toBe(200);
    expect((await t.admin.get('/%61pi/adm%69n/users')).body.items.map((u: { username: string }) => u.username)).toEqual(['admin', 'ana']);
    const cookie = (t.admin as unknown as { headers: Record<string, string> }).headers.cookie!;
    const answer = await rawRequest(port, `GET http://x/api/admin/users HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: ${cookie}\r\n\r\n`);
    expect(answer.status).toBe(200);
  });

  it('answers 401 without a session on every signed-in route, plain and percent-encoded', async () => {
    for (const route of routes('user')) {
      for (const url of variants(fill(route.url))) {
        const answer = await t.anonymous.request(route.method as 'GET', url, bodyFor(route.method));
        expect(answer.status, `${route.method} ${url}`).toBe(401);
      }
    }
  });

  it('keeps every path under /api/admin/ for Admins, even one a parametric route matches, and unknown ones', async () => {
    // GET /api/:sourceKey/alerts matches /api/admin/alerts with sourceKey "admin": the contract's rule still holds.
    for (const url of ['/api/admin/alerts', '/api/%61dmin/alerts', '/api/admin/no-such-thing', '/api/adm%69n/no-such-thing']) {
      expect((await t.anonymous.get(url)).status, url).toBe(401);
      expect((await analyst.get(url)).status, url).toBe(403);
    }
    expect((await t.admin.get('/api/%61dmin/no-such-thing')).status).toBe(404);
    // Public routes stay public.
    expect((await t.anonymous.get('/api/config')).body).toEqual({ url: 'https://lke.example.com' });
    expect((await t.anonymous.get('/health')).status).toBe(200);
  });

  it('refuses to start with a route that declares no access, or an /api/admin/ route not declared admin', async () => {
    const config = readProcessConfig({ PUBLIC_BASE_URL: 'https://lke.example.com' });
    const app = await buildApp({ db: t.db, settings: t.service.settings, config, logger: createLogger('silent'), worker: t.service.engine.worker, keyring: t.service.keyring, graphs: t.service.graphs, alertRuns: t.service.alertRuns });
    try {
      expect(() => app.get('/api/forgotten', async () => 'open')).toThrow("route GET /api/forgotten declares no access: give it config: { access: 'public' | 'user' | 'admin' }");
      expect(() => app.post('/api/admin/forgotten', { config: { access: 'user' } }, async () => 'open')).toThrow(
        "route POST /api/admin/forgotten is under /api/admin/ but declares access 'user': every /api/admin/ route needs 'admin'",
      );
      expect(() => app.get('/api/mistyped', { config: { access: 'Admin' as 'admin' } }, async () => 'open')).toThrow(/declares no access/);
      // Neither was added.
      expect(app.declaredRoutes.some((r) => r.url.includes('forgotten') || r.url.includes('mistyped'))).toBe(false);
    } finally {
      await app.close();
    }
  });
});
