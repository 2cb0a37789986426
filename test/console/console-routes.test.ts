import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_PAGES, consoleRoutes } from '../../src/console/console.routes.js';
import { removeDir } from '../support/databases.js';
import { startTestService, type TestService } from '../support/test-service.js';

// How the service answers the console's pages and assets (issue 13): index.html on every page path with the
// security headers, hashed assets cached for good, and a plain "run npm run build" where nothing is built.
describe('the console routes', () => {
  let dir: string;
  let built: FastifyInstance;
  let service: TestService;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'aw-console-dist-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/assets/app-abc123.js"></script>');
    writeFileSync(path.join(dir, 'assets', 'app-abc123.js'), 'console.log("app")');
    writeFileSync(path.join(dir, 'assets', 'notes.txt'), 'not an asset type');
    // The plugin alone, on a directory built here; the real app (run from source, so unbuilt) below.
    built = Fastify();
    await built.register(consoleRoutes, { directory: dir });
    service = await startTestService();
  });
  afterAll(async () => {
    await built?.close();
    await service?.close();
    removeDir(dir);
  });

  it('answers index.html on every page path, with a CSP of self only, nosniff and no framing', async () => {
    const paths = ['/', '/webhooks', '/webhooks/7', '/settings', '/users', '/alerts/3/case/17', '/webhooks/', '/alerts', '/sources/fraud/alerts', '/sources/fraud/alerts/new', '/sources/fraud/alerts/3', '/sources/fraud/alerts/3/runs'];
    for (const page of paths) {
      const answer = await built.inject({ method: 'GET', url: page });
      expect(answer.statusCode, page).toBe(200);
      expect(answer.headers['content-type'], page).toBe('text/html; charset=utf-8');
      expect(answer.body, page).toContain('/assets/app-abc123.js');
      const csp = String(answer.headers['content-security-policy']);
      expect(csp, page).toContain("default-src 'self'");
      expect(csp, page).toContain("frame-ancestors 'none'");
      expect(csp, page).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      expect(answer.headers['x-content-type-options'], page).toBe('nosniff');
      expect(answer.headers['cache-control'], page).toBe('no-cache');
    }
  });

  it('serves the built assets with their type and a long cache, and nothing else from the directory', async () => {
    const asset = await built.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.body).toBe('console.log("app")');
    for (const url of ['/assets/missing.js', '/assets/notes.txt', '/assets/..%2findex.html', '/assets/../index.html']) {
      const refused = await built.inject({ method: 'GET', url });
      expect(refused.statusCode, url).toBe(404);
      expect(refused.body, url).not.toContain('<!doctype html>');
    }
  });

  it('tells to run the build where the console is not built (the service run from source), not a 500', async () => {
    for (const url of ['/', '/webhooks', '/alerts/3/case/17']) {
      const answer = await service.app.inject({ method: 'GET', url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.headers['content-type'], url).toBe('text/plain; charset=utf-8');
      expect(answer.body, url).toContain('npm run build');
    }
  });

  it('shadows no API route nor /health, and declares every page public', async () => {
    expect((await service.anonymous.get('/health')).body).toEqual({ status: 'ok' });
    const unknownApi = await service.anonymous.get('/api/webhooks');
    expect(unknownApi.status).toBe(404);
    expect(unknownApi.body.key).toBe('api_not_found');
    expect((await service.anonymous.get('/api/dataSources')).status).toBe(401);
    const declared = service.app.declaredRoutes.filter((r) => r.method === 'GET' && (CONSOLE_PAGES as readonly string[]).includes(r.url));
    expect(declared.map((r) => r.url).sort()).toEqual([...CONSOLE_PAGES].sort());
    expect(declared.every((r) => r.access === 'public')).toBe(true);
  });
});
