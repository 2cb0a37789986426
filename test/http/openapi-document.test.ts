import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ASSETS, CONSOLE_PAGES } from '../../src/console/console.routes.js';
import { REPO_ROOT } from '../support/processes.js';
import { startTestService, type TestService } from '../support/test-service.js';

// Routes that take no body although they are POSTs: they act on what their path names.
const BODYLESS_POSTS = new Set(['/api/admin/webhooks/{webhookId}/ping', '/api/admin/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver']);
const HIDDEN = new Set<string>(['/api/openapi.json', ...CONSOLE_PAGES, CONSOLE_ASSETS]);

interface Operation {
  parameters?: { in: string; name: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

/**
 * The OpenAPI document and docs/api.md against the routes the app really registered: every route is in the
 * document with the schemas of what it takes and answers, and every route of the document is in the reference.
 */
describe('the OpenAPI document and the API reference', () => {
  let t: TestService;
  let paths: Record<string, Record<string, Operation>>;
  let routes: { method: string; path: string }[];

  beforeAll(async () => {
    t = await startTestService();
    const document = await t.anonymous.get('/api/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe('3.1.0');
    paths = document.body.paths;
    // HEAD twins of GET routes are Fastify's own; the document is the route itself.
    routes = t.app.declaredRoutes
      .filter((r) => r.method !== 'HEAD' && !HIDDEN.has(r.url))
      .map((r) => ({ method: r.method.toLowerCase(), path: r.url.replace(/:(\w+)/g, '{$1}') }));
  });
  afterAll(async () => t?.close());

  it('documents every registered route, with the schemas of its parameters, its body and its answers', () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    for (const { method, path } of routes) {
      const operation = paths[path]?.[method];
      expect(operation, `${method.toUpperCase()} ${path} is in the document`).toBeDefined();
      const where = `${method.toUpperCase()} ${path}`;

      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        const parameter = operation!.parameters?.find((p) => p.in === 'path' && p.name === name);
        expect(parameter?.schema, `${where}: path parameter ${name} has a schema`).toBeDefined();
      }
      if ((method === 'post' || method === 'patch') && !BODYLESS_POSTS.has(path) && !path.startsWith('/api/auth/logout')) {
        expect(operation!.requestBody?.content['application/json']?.schema, `${where}: body schema`).toBeDefined();
      }
      const success = Object.entries(operation!.responses).filter(([status]) => /^2\d\d$/.test(status));
      expect(success.length, `${where}: a 2xx answer`).toBeGreaterThan(0);
      for (const [status, response] of success) {
        // JSON, or text for GET /metrics (the Prometheus exposition).
        if (status !== '204') expect((response.content?.['application/json'] ?? response.content?.['text/plain'])?.schema, `${where}: ${status} answer schema`).toBeDefined();
      }
      // Every route that refuses bad input says so with the error body.
      const errors = Object.keys(operation!.responses).filter((status) => /^[45]\d\d$/.test(status));
      if (operation!.parameters?.length || operation!.requestBody) expect(errors, `${where}: documents its 400`).toContain('400');
    }
  });

  it('has every route of the document in docs/api.md', () => {
    const reference = readFileSync(`${REPO_ROOT}docs/api.md`, 'utf8');
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      for (const method of Object.keys(operations)) {
        // The reference writes path parameters as Express-style `:name`, as the routes are declared.
        const written = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
        if (!reference.includes(written)) missing.push(written);
      }
    }
    expect(missing).toEqual([]);
  });
});
