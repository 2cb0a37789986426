import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, ApiSession, launchChromium, newContext, signInAsAdmin, startCompiledService, type RunningService } from './service.js';

/**
 * The operator's pages in Chromium against the compiled service (issue 29): deliveries over time on the webhooks page
 * and a webhook's page, the webhooks list found by URL or description, and the search across webhooks with its filters
 * in the URL. One service, steps in order. CONSOLE_SCREENSHOTS=<dir> saves screenshots there (docs/console/).
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

describe('the operator\'s console pages, in Chromium', () => {
  let service: RunningService;
  let ok: TestReceiver;
  let down: TestReceiver;
  let browser: Browser;
  let page: Page;
  let api: ApiSession;
  let billing = 0;
  let fraud = 0;
  let caseId = 0;

  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  const health = async (query = '') => (await api.call('GET', `/api/admin/deliveries/health${query}`)).body;

  beforeAll(async () => {
    [service, ok, down, browser] = await Promise.all([startCompiledService(), TestReceiver.start(), TestReceiver.start(), launchChromium()]);
    down.behaviour = answer(500);
    api = await ApiSession.signIn(service.baseUrl, 'admin', ADMIN_PASSWORD);
    // Every second, one retry at once: the failing receiver's deliveries are each retried once, then failed.
    expect((await api.call('POST', '/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '*/1 * * * * *', retryScheduleMs: [0] } })).status).toBe(204);
    expect((await api.call('POST', '/api/admin/sources', { key: 'bank', name: 'Bank' })).status).toBe(201);
    const alert = (await api.call('POST', '/api/admin/bank/alerts', { title: 'Shared phone numbers' })).body;
    const create = async (url: string, description: string) =>
      (await api.call('POST', '/api/admin/webhooks', { url, secret: 'operator-console-secret', description })).body.id as number;
    billing = await create(ok.url, 'Billing system');
    fraud = await create(down.url, 'Fraud team inbox');
    // 14 new cases: 28 deliveries, more than a page of the search.
    const matches = Array.from({ length: 14 }, (_, i) => ({ nodes: [`client-${i}`, `phone-${i}`] }));
    const reported = (await api.call('POST', `/api/admin/bank/alerts/${alert.id}/matches`, { matches })).body;
    caseId = reported.cases[3].id;
    await waitUntil(async () => (await health()).totals.attempts === 14 + 2 * 14, 'every attempt counted', 30_000);
    page = await (await newContext(browser)).newPage();
    await signInAsAdmin(page, service.baseUrl);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([ok?.close(), down?.close()]);
    await service?.stop();
  });

  it('draws the deliveries of every webhook over time, with the success rate and p95 beside them', async () => {
    const chart = page.getByRole('region', { name: 'Deliveries over time' });
    await chart.getByRole('img', { name: 'Attempts per minute: 42 in all, 14 failed, 14 retried' }).waitFor();
    // uPlot (loaded with the first chart) drew its canvas.
    await chart.locator('canvas').first().waitFor();
    const figures = chart.getByRole('definition');
    // 14 of 42 attempts sent.
    expect(await figures.first().textContent()).toBe('33.3%');
    expect(await figures.nth(2).textContent()).toBe('42');
    await chart.getByRole('button', { name: 'Last day' }).click();
    await chart.getByRole('img', { name: /^Attempts per hour: 42 in all/ }).waitFor();
    expect(await chart.getByRole('button', { name: 'Last day' }).getAttribute('aria-pressed')).toBe('true');
    await chart.getByRole('button', { name: 'Last hour' }).click();
    await chart.getByRole('img', { name: /^Attempts per minute/ }).waitFor();
    await shoot('health-over-time');
  });

  it('finds webhooks by URL or description, the search in the URL', async () => {
    const receivers = page.getByRole('region', { name: 'Receivers' });
    await page.getByRole('searchbox', { name: 'Find webhooks' }).fill('FRAUD');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(`${service.baseUrl}/webhooks?q=FRAUD`);
    await waitUntil(async () => (await receivers.getByRole('row').count()) === 2, 'the fraud webhook alone');
    expect(await receivers.getByRole('link', { name: down.url }).isVisible()).toBe(true);
    // Back: every webhook again.
    await page.goBack();
    await waitUntil(async () => (await receivers.getByRole('row').count()) === 3, 'both webhooks');
  });

  it('draws one webhook\'s deliveries over time on its page', async () => {
    await page.getByRole('link', { name: down.url }).click();
    await page.getByRole('heading', { level: 1, name: /Webhook/ }).waitFor();
    const chart = page.getByRole('region', { name: 'Deliveries over time' });
    await chart.getByRole('img', { name: 'Attempts per minute: 28 in all, 14 failed, 14 retried' }).waitFor();
    expect(await chart.getByRole('definition').first().textContent()).toBe('0.0%');
    expect((await health(`?webhookId=${fraud}`)).totals.successRate).toBe(0);
  });

  it('searches the deliveries of every webhook, the filters in a URL to share, page after page', async () => {
    await page.getByRole('link', { name: 'Search deliveries' }).click();
    await page.getByRole('heading', { level: 1, name: 'Search deliveries' }).waitFor();
    const results = page.getByRole('region', { name: 'Every delivery' });
    // 28 deliveries: a page of 25, then 3.
    await waitUntil(async () => (await results.getByRole('row').count()) === 26, 'a first page of 25');
    await results.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await waitUntil(async () => (await results.getByRole('row').count()) === 4, 'a second page of 3');
    await results.getByRole('button', { name: 'Newest' }).click();
    await waitUntil(async () => (await results.getByRole('row').count()) === 26, 'the first page again');

    // Filters: the failed deliveries of one case.
    await page.getByLabel('Case id').fill(String(caseId));
    await page.getByLabel('Delivery status').selectOption('failed');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL((url) => url.pathname === '/deliveries' && url.searchParams.get('status') === 'failed' && url.searchParams.get('caseId') === String(caseId));
    const found = page.getByRole('region', { name: 'Deliveries found' });
    await waitUntil(async () => (await found.getByRole('row').count()) === 2, 'one failed delivery of the case');
    const row = found.getByRole('row').nth(1);
    expect(await row.getByRole('link', { name: `#${fraud}` }).isVisible()).toBe(true);
    expect(await row.getByText(`case ${caseId}`).isVisible()).toBe(true);
    // Its attempt log, opened below.
    await row.getByRole('button', { name: /^Open delivery/ }).click();
    await found.getByRole('list', { name: 'Attempt log' }).getByRole('listitem').filter({ hasText: '500' }).first().waitFor();
    await shoot('search');

    // The address is the search: opened elsewhere, the same filters and results.
    const shared = await page.context().newPage();
    await shared.goto(page.url());
    const again = shared.getByRole('region', { name: 'Deliveries found' });
    await waitUntil(async () => (await again.getByRole('row').count()) === 2, 'the shared search');
    expect(await shared.getByLabel('Case id').inputValue()).toBe(String(caseId));
    expect(await shared.getByLabel('Delivery status').inputValue()).toBe('failed');
    await shared.close();

    // A filter the API refuses says why.
    await page.goto(`${service.baseUrl}/deliveries?responseStatus=42`);
    await page.getByRole('alert').filter({ hasText: 'responseStatus' }).waitFor();
    expect(billing).toBeGreaterThan(0);
  });
});
