import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStandardWebhook } from '../../src/delivery/verify.js';
import { examplePayload } from '../../src/outbox/event-examples.js';
import { REPO_ROOT, waitUntil } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, ApiSession, launchChromium, newContext, signInAsAdmin, startCompiledService, type RunningService } from './service.js';

const run = promisify(execFile);
// What the functions run in the page use (this project's types are Node's, not the DOM's).
declare const window: { scrollX: number; scrollY: number; scrollBy(x: number, y: number): void };
declare const getComputedStyle: (element: unknown, pseudo?: string) => { display: string; content: string };
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;
const SECRET = 'exchange-console-secret-0123';

/**
 * The console's view of an exchange with a receiver (issue 29, items 3 to 5), in Chromium against the compiled
 * service: the empty webhooks page, sending an example, the attempt as sent and answered with copy-as-curl, "queued"
 * after a redeliver, messages that move no button, a typed secret rotation, and the deliveries at 390 px wide. One
 * service; the steps build on each other. CONSOLE_SCREENSHOTS=<dir> saves the screenshots (docs/console/).
 */
describe('the exchange with a receiver, in the console', () => {
  let service: RunningService;
  let receiver: TestReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let api: ApiSession;
  let webhookId = 0;

  const shoot = async (target: Page, name: string, scrollTo?: Locator) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    if (scrollTo) await scrollTo.evaluate((element) => (element.scrollIntoView(), window.scrollBy(0, -16)));
    else await target.evaluate('window.scrollTo(0, 0)');
    await target.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  };
  const deliveries = () => page.getByRole('region', { name: 'Deliveries', exact: true });
  /** Where a control is on the page (not in the viewport: a click may scroll), to see that nothing moved it. */
  const placeOf = (control: Locator) =>
    control.evaluate((element) => {
      const box = element.getBoundingClientRect();
      return [box.x + window.scrollX, box.y + window.scrollY, box.width, box.height];
    });
  const boxes = (names: string[]) => Promise.all(names.map((name) => placeOf(page.getByRole('button', { name, exact: true }))));

  beforeAll(async () => {
    [service, receiver, browser] = await Promise.all([startCompiledService(), TestReceiver.start(), launchChromium()]);
    api = await ApiSession.signIn(service.baseUrl, 'admin', ADMIN_PASSWORD);
    // Due deliveries wait for a run once a year: what is queued stays queued while the page is looked at.
    expect((await api.call('POST', '/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '0 0 1 1 *', retryScheduleMs: [] } })).status).toBe(204);
    expect((await api.call('POST', '/api/admin/sources', { key: 'bank', name: 'Bank' })).status).toBe(201);
    expect((await api.call('POST', '/api/admin/bank/alerts', { title: 'Shared phone numbers' })).status).toBe(201);
    context = await newContext(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.baseUrl });
    page = await context.newPage();
    await signInAsAdmin(page, service.baseUrl);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await service?.stop();
  });

  it('says on the empty webhooks page how to make the first webhook, and links the example receiver', async () => {
    const list = page.getByRole('region', { name: 'Receivers' });
    await list.getByText('No webhook yet.').waitFor();
    expect(await list.getByRole('listitem').count()).toBe(3);
    await shoot(page, 'webhooks-empty');
    await list.getByRole('link', { name: 'example receiver' }).click();
    await page.getByRole('heading', { level: 1, name: 'Example receiver' }).waitFor();
    // The file itself, as the repository has it.
    const source = await page.getByRole('region', { name: 'examples/receiver.ts' }).locator('pre').textContent();
    expect(source).toBe(readFileSync(path.join(REPO_ROOT, 'examples/receiver.ts'), 'utf8'));
  });

  it('sends an example, shows the attempt as sent and answered, and copies it as curl that the receiver takes again', async () => {
    webhookId = (await api.call('POST', '/api/admin/webhooks', { url: receiver.url, secret: SECRET })).body.id;
    receiver.behaviour = answer(200, { 'content-type': 'text/plain', 'x-receiver': 'desk-3' }, 'stored, thanks');
    await page.goto(`${service.baseUrl}/webhooks/${webhookId}`);
    await page.getByLabel('Example of').selectOption('caseStatusChange');
    await page.getByRole('button', { name: 'Send example' }).click();
    await page.getByText('Example caseStatusChange delivered: the receiver answered 200').waitFor();
    expect(receiver.received.at(-1)!.body).toBe(examplePayload('caseStatusChange'));

    const row = deliveries().getByRole('row').filter({ hasText: 'caseStatusChange' });
    await row.getByText('test').waitFor();
    const id = (await api.call('GET', `/api/admin/webhooks/${webhookId}/deliveries`)).body.items[0].id;
    await row.getByRole('button', { name: `Open delivery ${id}` }).click();
    const detail = page.getByRole('region', { name: `Delivery ${id}` });
    const sent = receiver.received.at(-1)!;
    const requestHeaders = detail.getByRole('table', { name: 'Request headers of attempt 1' });
    await requestHeaders.waitFor();
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-payload-hmac']) {
      expect(await requestHeaders.getByRole('row').filter({ hasText: name }).getByRole('cell').textContent()).toBe(sent.headers[name]);
    }
    expect(await detail.getByRole('table', { name: 'Answer headers of attempt 1' }).getByRole('row').filter({ hasText: 'x-receiver' }).getByText('desk-3').isVisible()).toBe(true);
    expect(await detail.getByLabel('Answer body of attempt 1').textContent()).toBe('stored, thanks');
    expect(await detail.getByText(/first byte after \d+ ms/).isVisible()).toBe(true);
    await shoot(page, 'delivery-exchange', detail);

    await detail.getByRole('button', { name: 'Copy as curl' }).click();
    await detail.getByText('Copied').waitFor();
    const command: string = await page.evaluate('navigator.clipboard.readText()');
    expect(command).not.toContain(SECRET);
    // The copy, run by a shell, is the same request: the same bytes, and signatures that verify with the secret.
    const before = receiver.received.length;
    const { stdout } = await run('sh', ['-c', command]);
    expect(stdout).toBe('stored, thanks');
    const again = receiver.received[before]!;
    expect(again.body).toBe(sent.body);
    for (const name of ['webhook-id', 'webhook-signature', 'x-payload-hmac', 'content-type', 'user-agent']) expect(again.headers[name], name).toBe(sent.headers[name]);
    expect(verifyStandardWebhook(SECRET, Buffer.from(again.body), again.headers)).toBe(true);
  });

  it('reads "queued" after a redeliver, and its messages move no button', async () => {
    const row = ['Send ping', 'Send example', 'Delete webhook', 'Edit webhook', 'Rotate secret', 'Redeliver all failed'];
    const before = await boxes(row);
    receiver.behaviour = answer(500, {}, 'receiver broke');
    await page.getByLabel('Example of').selectOption('newCase');
    await page.getByRole('button', { name: 'Send example' }).click();
    await page.getByText('Example newCase failed: receiver answered 500').waitFor();
    expect(await boxes(row)).toEqual(before);

    const failed = (await api.call('GET', `/api/admin/webhooks/${webhookId}/deliveries?status=failed`)).body.items[0];
    await deliveries().getByRole('button', { name: `Open delivery ${failed.id}` }).click();
    const detail = page.getByRole('region', { name: `Delivery ${failed.id}` });
    await detail.getByRole('listitem', { name: 'Attempt 1' }).getByText('receiver broke').waitFor();
    const redeliver = detail.getByRole('button', { name: 'Redeliver', exact: true });
    const [redeliverBefore, closeBefore] = [await placeOf(redeliver), await placeOf(detail.getByRole('button', { name: 'Close delivery' }))];
    await redeliver.click();
    await detail.getByText('Queued again').waitFor();
    expect([await placeOf(redeliver), await placeOf(detail.getByRole('button', { name: 'Close delivery' }))]).toEqual([redeliverBefore, closeBefore]);
    // The row, refreshed: queued for the next run (once a year here), no attempt since, not "next 2 s ago".
    const failedRow = deliveries().getByRole('row').filter({ has: page.getByRole('button', { name: `Open delivery ${failed.id}` }) });
    await failedRow.getByText('queued for the next delivery run').waitFor();
    expect(await failedRow.getByRole('cell').allTextContents()).toEqual([`#${failed.id}`, 'newCase', 'queuedtest', '—', '500', expect.stringMatching(/ago$/), 'queued for the next delivery run']);
    expect(await detail.getByText('queued: it goes out at the next delivery run').isVisible()).toBe(true);
    expect(await detail.getByText('none since it was redelivered (1 before)').isVisible()).toBe(true);
    await detail.getByRole('button', { name: 'Close delivery' }).click();

    // "Copied" shows over the page: the buttons beside it stay where they were.
    await deliveries().getByRole('button', { name: `Open delivery ${failed.id}` }).click();
    const copyRow = ['Copy as curl', 'Copy payload'].map((name) => page.getByRole('button', { name }));
    const copyBefore = await Promise.all(copyRow.map(placeOf));
    await copyRow[1]!.click();
    await page.getByText('Copied').waitFor();
    expect(await Promise.all(copyRow.map(placeOf))).toEqual(copyBefore);
    await page.getByRole('button', { name: 'Close delivery' }).click();
  });

  it('rotates to a secret the admin types: a weak one refused beside the field, never shown back; the new one signs', async () => {
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const form = page.getByRole('form', { name: 'Rotate secret' });
    await form.getByLabel('Type my own secret').check();
    const weak = 'abababababababababab';
    await form.getByLabel('Secret', { exact: true }).fill(weak);
    await form.getByRole('button', { name: 'Rotate to this secret' }).click();
    const refusal = form.getByText('secret must have at least 6 different characters');
    await refusal.waitFor();
    expect(((await form.getByLabel('Secret', { exact: true }).getAttribute('aria-describedby')) ?? '').split(' ')).toContain(await refusal.getAttribute('id'));
    // Only the field holds it: no message repeats it.
    expect(await page.evaluate('document.body.innerText')).not.toContain(weak);
    await shoot(page, 'rotate-secret-typed', form);

    const typed = 'typed-by-the-admin-0123456789';
    await form.getByLabel('Secret', { exact: true }).fill(typed);
    await form.getByLabel('Overlap (ms)').fill('0');
    await form.getByRole('button', { name: 'Rotate to this secret' }).click();
    await page.getByText('Secret rotated to the one you typed').waitFor();
    expect(await page.evaluate('document.body.innerText')).not.toContain(typed);
    expect(await page.getByLabel('New secret (shown once)').count()).toBe(0);
    receiver.behaviour = answer(204);
    const pinged = receiver.received.length;
    await page.getByRole('button', { name: 'Send ping' }).click();
    await page.getByText('Ping delivered').waitFor();
    const ping = receiver.received[pinged]!;
    expect(ping.headers['x-payload-hmac']).toBe(createHmac('sha256', typed).update(ping.body).digest('hex'));
  });

  it('fits the deliveries into a 390 px wide screen: each a card, nothing scrolling sideways', async () => {
    // Real deliveries beside the tests: two new cases, queued until the next run.
    for (const nodes of [['n1'], ['n2']]) expect((await api.call('POST', '/api/admin/bank/alerts/1/matches', { matches: [{ nodes }] })).status).toBe(200);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const list = deliveries();
    await list.getByRole('row').filter({ hasText: 'newCase' }).filter({ hasText: 'queued' }).first().waitFor();
    const fits = async () => page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth && document.documentElement.clientWidth <= 390');
    expect(await fits()).toBe(true);
    // A row is a card: its cells stacked, each with its label.
    const cell = list.getByRole('row').nth(1).getByRole('cell').first();
    expect(await cell.evaluate((td) => [getComputedStyle(td).display, getComputedStyle(td, '::before').content])).toEqual(['flex', '"Delivery"']);
    await shoot(page, 'deliveries-390', list);

    const opened = (await api.call('GET', `/api/admin/webhooks/${webhookId}/deliveries`)).body.items.find((d: { payload: { eventType: string } }) => d.payload.eventType === 'caseStatusChange');
    await list.getByRole('button', { name: `Open delivery ${opened.id}` }).click();
    await page.getByRole('table', { name: 'Request headers of attempt 1' }).waitFor();
    await waitUntil(async () => (await fits()) === true, 'the opened delivery fits too');
    await shoot(page, 'delivery-390', page.getByRole('region', { name: `Delivery ${opened.id}` }));
  });
});
