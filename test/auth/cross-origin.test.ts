import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../support/fixtures.js';
import { TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, startTestService, type TestService } from '../support/test-service.js';

/** A page on another port of this host (same site, another origin) that posts to the service with the visitor's cookie. */
function startAttackerPage(serviceBase: string, webhookId: number): Promise<{ server: Server; url: string }> {
  const html = `<!doctype html><title>waiting</title><script>
    const opts = { method: 'POST', mode: 'no-cors', credentials: 'include' };
    // The logout LKE's client sends as a GET, asked by an image as a link or a page could.
    const image = new Promise((done) => { const img = new Image(); img.onload = img.onerror = done; img.src = '${serviceBase}/api/auth/logout'; });
    Promise.allSettled([
      fetch('${serviceBase}/api/admin/webhooks/${webhookId}/ping', opts),
      fetch('${serviceBase}/api/auth/logout', opts),
      fetch('${serviceBase}/api/auth/logout', { mode: 'no-cors', credentials: 'include' }),
      image,
    ]).then(() => { document.title = 'done'; });
  </script>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` })));
}

describe('state-changing requests from another origin with a session cookie', () => {
  let t: TestService;
  let receiver: TestReceiver;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    receiver = await TestReceiver.start();
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  it("are refused when a page on another port of the host makes the admin's browser send them; the console's own are not", async () => {
    const webhook = await createWebhook(t.admin, { url: receiver.url });
    const attacker = await startAttackerPage(base, webhook.id);
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      // The admin signs in on the service's own origin.
      await page.goto(`${base}/health`);
      const signedIn = await page.evaluate(async (password) => {
        const response = await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail: 'admin', password }) });
        return response.status;
      }, ADMIN_PASSWORD);
      expect(signedIn).toBe(200);

      // Then opens a page on another port of the same host, which is the same site, so the cookie goes along.
      await page.goto(attacker.url);
      await page.waitForFunction("document.title === 'done'");

      // No ping was made or recorded, and the session still works.
      expect(receiver.received).toHaveLength(0);
      expect((await t.admin.get(`/api/admin/webhooks/${webhook.id}/deliveries`)).body.totalCount).toBe(0);
      await page.goto(`${base}/health`);
      const [me, ping] = await page.evaluate(async (id) => {
        const who = await fetch('/api/auth/me');
        const pinged = await fetch(`/api/admin/webhooks/${id}/ping`, { method: 'POST' });
        return [who.status, pinged.status];
      }, webhook.id);
      expect(me).toBe(200);
      // The service's own origin may: Sec-Fetch-Site says same-origin.
      expect(ping).toBe(200);
      expect(receiver.received).toHaveLength(1);
      await context.close();
    } finally {
      attacker.server.close();
    }
  }, 60_000);

  it('are refused by Origin when Sec-Fetch-Site is missing; the public origin and a request with neither header are not, nor is reading', async () => {
    const webhook = await createWebhook(t.admin, { url: receiver.url });
    const crossOrigin = await t.admin.request('POST', `/api/admin/webhooks/${webhook.id}/ping`, undefined, { origin: 'http://127.0.0.1:1' });
    expect(crossOrigin).toMatchObject({
      status: 403,
      body: { key: 'forbidden', message: 'POST from another origin with a session cookie is refused: use the console on https://lke.example.com, or an API key' },
    });
    const sameSite = await t.admin.request('POST', `/api/admin/webhooks/${webhook.id}/ping`, undefined, { 'sec-fetch-site': 'same-site' });
    expect(sameSite.status).toBe(403);
    // The public base URL's origin is this service's own (behind a proxy that changes Host).
    expect((await t.admin.request('POST', `/api/admin/webhooks/${webhook.id}/ping`, undefined, { origin: 'https://lke.example.com' })).status).toBe(200);
    expect((await t.admin.request('POST', `/api/admin/webhooks/${webhook.id}/ping`)).status).toBe(200);
    // Reading is never refused.
    expect((await t.admin.request('GET', '/api/admin/webhooks', undefined, { origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' })).status).toBe(200);
  });
});
