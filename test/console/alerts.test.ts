import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ApiSession, launchChromium, newContext, signInAsAdmin, startCompiledService, type RunningService } from './service.js';

/**
 * The alert pages and the case drawn as a graph (issue 27), in Debian's Chromium against the compiled service, on an
 * embedded graph: an admin writes a Cypher alert, previews it, saves it, runs it, reads its run and its cases, and
 * opens a case, whose page draws the target with Cytoscape.js. The steps share one service and build on each other.
 * CONSOLE_SCREENSHOTS=<dir> also saves the pages for docs/console/; the drawn case is always saved among the test's
 * artefacts (CONSOLE_ARTEFACTS, default test-results/console/).
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;
const ARTEFACTS = process.env.CONSOLE_ARTEFACTS ?? path.resolve('test-results', 'console');

// Clients sharing a phone: one case per phone, its target the phone with its clients and their links.
const SHARED_PHONE = 'MATCH path = (c:Client)-[:HAS_PHONE]->(p:Phone) WITH p, collect(path) AS paths WHERE size(paths) > 1 RETURN paths, p.number AS phone';
const GRAPH = [
  'CREATE NODE TABLE Client(id STRING, name STRING, PRIMARY KEY(id))',
  'CREATE NODE TABLE Phone(number STRING, PRIMARY KEY(number))',
  'CREATE REL TABLE HAS_PHONE(FROM Client TO Phone)',
  "UNWIND ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'] AS id CREATE (:Client {id: id, name: upper(substring(id, 1, 1)) + substring(id, 2, 10)})",
  "UNWIND ['555-0100', '555-0101', '555-0102'] AS n CREATE (:Phone {number: n})",
  "UNWIND [['alice', '555-0100'], ['bob', '555-0100'], ['carol', '555-0101'], ['dave', '555-0101'], ['erin', '555-0101'], ['frank', '555-0102']] AS pair " +
    'MATCH (c:Client {id: pair[1]}), (p:Phone {number: pair[2]}) CREATE (c)-[:HAS_PHONE]->(p)',
];

describe('the alert pages and the case graph, in Chromium', () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let api: ApiSession;
  let alertPage = '';

  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  };

  beforeAll(async () => {
    [service, browser] = await Promise.all([startCompiledService(), launchChromium()]);
    api = await ApiSession.signIn(service.baseUrl, 'admin', ADMIN_PASSWORD);
    expect((await api.call('POST', '/api/admin/sources', { key: 'fraud', name: 'Fraud', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of GRAPH) expect((await api.call('POST', '/api/fraud/graph/run/query', { query })).status).toBe(200);
    const context = await newContext(browser);
    page = await context.newPage();
    await signInAsAdmin(page, service.baseUrl);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('writes a Cypher alert: the CRON read as you type, a bad query refused beside it, the preview showing the rows, then saved', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    await page.waitForURL(`${service.baseUrl}/sources/fraud/alerts`);
    await page.getByText('No alert on this data source yet').waitFor();
    await page.getByRole('link', { name: 'New alert' }).click();

    await page.getByLabel('Title').fill('Shared phone numbers');
    await page.getByLabel('CRON').fill('0 */6 * * *');
    // The next three times, read by croner in the browser (the context runs in UTC).
    expect(await page.locator('.next-runs').textContent()).toMatch(/^[^·]+(00|06|12|18):00 · [^·]+(00|06|12|18):00 · [^·]+(00|06|12|18):00$/);

    const editor = page.getByRole('textbox', { name: 'Cypher of query 1' });
    await editor.fill('MATCH (c:Client) RETURN c ORDER BY');
    await page.getByRole('button', { name: 'Preview query 1' }).click();
    expect(await page.locator('fieldset.query .field-error').textContent()).toMatch(/Parser exception/);
    await expect.poll(() => editor.getAttribute('aria-invalid')).toBe('true');
    // A preview saves nothing, so its error says nothing of saving; a save refused for the same query does.
    expect(await page.getByText(/^Not saved/).count()).toBe(0);
    await page.getByRole('button', { name: 'Create alert' }).click();
    await page.getByText('Not saved: see the message beside the field.').waitFor();
    expect(page.url()).toBe(`${service.baseUrl}/sources/fraud/alerts/new`);

    await editor.fill(SHARED_PHONE);
    await page.getByLabel('Target').fill('paths');
    await page.getByRole('button', { name: 'Add a column' }).click();
    await page.getByLabel('Column 1 title').fill('Phone');
    await page.getByLabel('Column 1 returned as').fill('phone');
    await page.getByRole('button', { name: 'Preview query 1' }).click();
    const preview = page.getByRole('table', { name: 'Preview of query 1' });
    await preview.waitFor();
    expect(await preview.getByRole('row').allInnerTexts()).toEqual([
      expect.stringMatching(/^Row\s+Nodes\s+Edges\s+Phone$/),
      expect.stringMatching(/^1\s+Client:alice Phone:555-0100 Client:bob\s+HAS_PHONE HAS_PHONE\s+555-0100$/),
      expect.stringMatching(/^2\s+Client:carol Phone:555-0101 Client:dave Client:erin\s+HAS_PHONE HAS_PHONE HAS_PHONE\s+555-0101$/),
    ]);
    // The query, its preview and the target in view.
    await page.locator('fieldset.query').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'alert-editor.png') });

    await page.getByRole('button', { name: 'Create alert' }).click();
    await page.waitForURL(/\/sources\/fraud\/alerts\/\d+$/);
    alertPage = page.url();
    const saved = (await api.call('GET', `/api/fraud/alerts/${alertPage.split('/').at(-1)}`)).body;
    expect(saved).toMatchObject({ title: 'Shared phone numbers', cron: '0 */6 * * *', target: 'paths', queries: [{ query: SHARED_PHONE }], columns: [{ columnName: 'phone' }] });
  });

  it('runs it now: the run is in its history, and its cases in its list with their column values', async () => {
    await page.getByRole('button', { name: 'Run now' }).click();
    expect(await page.getByRole('status').filter({ hasText: /^Run ok/ }).textContent()).toMatch(/^Run ok: 2 new, 0 seen in .+, 2 new cases\.$/);
    await shoot('alert');

    await page.getByRole('navigation', { name: 'Alert' }).getByRole('link', { name: 'Runs' }).click();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.getByRole('row').filter({ hasText: 'by hand' }).waitFor();
    expect(await runs.getByRole('row').nth(1).innerText()).toMatch(/by hand\s+ok\s+.+\s+2\s+2 \/ 0\s+2\s+2$/);
    await shoot('alert-runs');

    await page.getByRole('navigation', { name: 'Alert' }).getByRole('link', { name: 'Cases' }).click();
    const cases = page.getByRole('table', { name: 'Cases' });
    await cases.waitFor();
    expect(await cases.getByRole('row').filter({ hasText: 'unconfirmed' }).count()).toBe(2);
    expect(await cases.getByRole('row').filter({ hasText: '555-0101' }).innerText()).toMatch(/unconfirmed\s+4 nodes, 3 edges\s+1\s+555-0101/);
    await shoot('alert-cases');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Shared phone numbers' });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/every 6 hours at minute 0[\s\S]+ok[\s\S]+2 new, 0 seen[\s\S]+\b2$/);
    await shoot('alerts');
  });

  it('opens a case: its target drawn by Cytoscape.js, a node’s properties on selection; then confirms it', async () => {
    await page.goto(`${alertPage}/cases`);
    await page.getByRole('row').filter({ hasText: '555-0101' }).getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: /^Case \d+/ }).waitFor();
    const drawing = page.locator('.case-graph-canvas[data-nodes]');
    await drawing.waitFor();
    // Read from Cytoscape once it has laid the elements out: the phone, its three clients, their three links.
    expect(await drawing.getAttribute('data-nodes')).toBe('4');
    expect(await drawing.getAttribute('data-edges')).toBe('3');
    expect(await page.locator('.case-graph-canvas canvas').count()).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Client:carol', exact: true }).click();
    const panel = page.getByRole('complementary', { name: 'Selected item' });
    expect(await panel.innerText()).toMatch(/Node Client\s+Client:carol\s+id\s+carol\s+name\s+Carol/);
    expect(await page.getByRole('table', { name: 'Matches' }).innerText()).toMatch(/4 nodes, 3 edges\s+555-0101/);

    mkdirSync(ARTEFACTS, { recursive: true });
    const artefact = path.join(ARTEFACTS, 'case-graph.png');
    await page.screenshot({ path: artefact, fullPage: true });
    expect(statSync(artefact).size).toBeGreaterThan(20_000);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'case-graph.png'), fullPage: true });

    await page.getByLabel('Action', { exact: true }).selectOption('confirm');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('status').filter({ hasText: 'Status changed to confirmed.' }).waitFor();
    const caseId = page.url().split('/').at(-1);
    const alertId = alertPage.split('/').at(-1);
    expect((await api.call('GET', `/api/fraud/alerts/${alertId}/cases/${caseId}`)).body.status).toBe('confirmed');
  });
});
