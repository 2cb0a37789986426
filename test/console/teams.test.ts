import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ApiSession, launchChromium, newContext, signInAsAdmin, startCompiledService, type RunningService } from './service.js';

/**
 * Teams in the console (issue 40), in Debian's Chromium against the compiled service: an Admin gives two custom
 * groups of one data source different alerts and puts an Analyst in one of them; the Analyst's inbox shows that
 * group's cases only, and there they take a case, comment on it and confirm two at once; the API says it happened,
 * and the Admin reads it all in the audit log. Two data sources without a graph, their cases reported as matches.
 * The steps share one service and build on each other. CONSOLE_SCREENSHOTS=<dir> saves the pages for docs/console/.
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;
const FAY_PASSWORD = 'fay-password-1';

describe('teams: groups, access rights, the case inbox and the audit log, in Chromium', () => {
  let service: RunningService;
  let browser: Browser;
  let admin: Page;
  let fay: Page;
  let api: ApiSession;
  // Alert ids by title, and their cases' ids in the order reported.
  const alerts: Record<string, number> = {};
  const cases: Record<string, number[]> = {};
  let taken = 0;

  const shoot = async (page: Page, name: string, options: { fullPage?: boolean } = {}) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), ...options });
  };
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  const inboxRows = (page: Page) => page.getByRole('table', { name: 'Cases' }).getByRole('row').filter({ has: page.getByRole('checkbox', { name: /^Select case \d+$/ }) });

  beforeAll(async () => {
    [service, browser] = await Promise.all([startCompiledService(), launchChromium()]);
    api = await ApiSession.signIn(service.baseUrl, 'admin', ADMIN_PASSWORD);
    const setup: [string, string, string, string[][]][] = [
      ['fraud', 'Fraud', 'Shared phones', [['1', '2'], ['3', '4'], ['5', '6']]],
      ['fraud', 'Fraud', 'Large transfers', [['7'], ['8']]],
      ['sanctions', 'Sanctions', 'Listed names', [['9'], ['10']]],
    ];
    for (const [key, name, title, matches] of setup) {
      if ((await api.call('GET', `/api/admin/sources/${key}`)).status === 404) expect((await api.call('POST', '/api/admin/sources', { key, name })).status).toBe(201);
      const created = await api.call('POST', `/api/admin/${key}/alerts`, { title });
      expect(created.status).toBe(201);
      alerts[title] = created.body.id;
      const reported = await api.call('POST', `/api/admin/${key}/alerts/${created.body.id}/matches`, { matches: matches.map((nodes) => ({ nodes })) });
      expect(reported.status).toBe(200);
      cases[title] = reported.body.cases.map((c: { id: number }) => c.id);
    }
    admin = await (await newContext(browser)).newPage();
    await signInAsAdmin(admin, service.baseUrl);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('creates two groups of Fraud, each reading one alert, and edits their access rights in a form', async () => {
    await nav(admin, 'Groups');
    await admin.waitForURL(`${service.baseUrl}/sources/fraud/groups`);
    const groups = admin.getByRole('table', { name: 'Groups of Fraud' });
    // The built-in groups are listed, and cannot be renamed or deleted.
    await groups.getByRole('row').filter({ hasText: 'Analyst' }).waitFor();
    expect(await groups.getByRole('row').filter({ hasText: 'Analyst' }).getByRole('button').count()).toBe(0);

    for (const [name, alert] of [
      ['Phone team', 'Shared phones'],
      ['Transfers team', 'Large transfers'],
    ] as const) {
      await admin.getByLabel('Group name').fill(name);
      await admin.getByRole('button', { name: 'Create group' }).click();
      await admin.getByRole('heading', { level: 1, name: `Group ${name}` }).waitFor();
      expect(admin.url()).toMatch(/\/sources\/fraud\/groups\/\d+$/);
      await admin.getByRole('checkbox', { name: alert }).check();
      // The other alert stays unread; every node category and edge type readable.
      expect(await admin.getByRole('checkbox', { name: alert === 'Shared phones' ? 'Large transfers' : 'Shared phones' }).isChecked()).toBe(false);
      await admin.getByLabel('Level of every node category').selectOption('read');
      await admin.getByLabel('Level of every edge type').selectOption('read');
      await admin.getByRole('checkbox', { name: /rawReadQuery/ }).check();
      if (name === 'Phone team') {
        // A category named apart from `*`: Person stays unreadable to this group.
        await admin.getByRole('button', { name: 'Add a node category' }).click();
        await admin.getByLabel('Node category 1', { exact: true }).fill('Person');
        await admin.getByLabel('Level of node category 1').selectOption('none');
      }
      await admin.getByRole('button', { name: 'Save access rights' }).click();
      await admin.getByRole('status').filter({ hasText: 'Access rights saved.' }).waitFor();
      if (name === 'Phone team') await shoot(admin, 'access-rights', { fullPage: true });
      await admin.getByRole('link', { name: 'Groups of Fraud' }).click();
    }

    const stored = (await api.call('GET', '/api/admin/fraud/groups')).body as { name: string; accessRights: unknown[] }[];
    expect(stored.find((g) => g.name === 'Phone team')?.accessRights).toEqual(
      expect.arrayContaining([
        { targetType: 'alert', targetName: String(alerts['Shared phones']), type: 'read' },
        { targetType: 'nodeCategory', targetName: '*', type: 'read' },
        { targetType: 'nodeCategory', targetName: 'Person', type: 'none' },
        { targetType: 'edgeType', targetName: '*', type: 'read' },
        { targetType: 'action', targetName: 'rawReadQuery', type: 'do' },
      ]),
    );
    expect(stored.find((g) => g.name === 'Phone team')?.accessRights).toHaveLength(5);
    expect(stored.find((g) => g.name === 'Transfers team')?.accessRights).toContainEqual({ targetType: 'alert', targetName: String(alerts['Large transfers']), type: 'read' });
    await groups.getByRole('row').filter({ hasText: 'Transfers team' }).filter({ hasText: `alert #${alerts['Large transfers']}` }).waitFor();
    expect(await groups.getByRole('row').filter({ hasText: 'Phone team' }).innerText()).toContain(`alert #${alerts['Shared phones']} · nodes: read (1 named apart)`);
  });

  it('renames a group and deletes one after asking', async () => {
    const groups = admin.getByRole('table', { name: 'Groups of Fraud' });
    await admin.getByLabel('Group name').fill('Scratch');
    await admin.getByRole('button', { name: 'Create group' }).click();
    await admin.getByRole('heading', { level: 1, name: 'Group Scratch' }).waitFor();
    await admin.getByRole('link', { name: 'Groups of Fraud' }).click();

    await admin.getByRole('button', { name: 'Rename group Scratch' }).click();
    await admin.getByLabel('New name of Scratch').fill('Scratch pad');
    await admin.getByRole('button', { name: 'Save', exact: true }).click();
    await groups.getByRole('row').filter({ hasText: 'Scratch pad' }).waitFor();

    await admin.getByRole('button', { name: 'Delete group Scratch pad' }).click();
    const dialog = admin.getByRole('dialog', { name: 'Delete the group Scratch pad?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await groups.getByRole('row').filter({ hasText: 'Scratch pad' }).count()).toBe(1);
    await admin.getByRole('button', { name: 'Delete group Scratch pad' }).click();
    await dialog.getByRole('button', { name: 'Delete group' }).click();
    await groups.getByRole('row').filter({ hasText: 'Scratch pad' }).waitFor({ state: 'detached' });
    expect(((await api.call('GET', '/api/admin/fraud/groups')).body as { name: string }[]).map((g) => g.name).sort()).toEqual(['Admin', 'Analyst', 'Phone team', 'Transfers team']);
    await shoot(admin, 'groups');
  });

  it('creates an Analyst in the Phone team only, from the users page', async () => {
    await nav(admin, 'Users and API keys');
    await admin.getByLabel('Username', { exact: true }).fill('fay');
    await admin.getByLabel('Email').fill('fay@example.com');
    await admin.getByLabel('Password').fill(FAY_PASSWORD);
    await admin.getByLabel('Group', { exact: true }).selectOption({ label: 'Phone team (Fraud)' });
    await admin.getByRole('button', { name: 'Create user' }).click();
    await admin.getByRole('table', { name: 'Users' }).getByRole('row').filter({ hasText: 'fay@example.com' }).filter({ hasText: 'Phone team (Fraud)' }).waitFor();
    const users = (await api.call('GET', '/api/admin/users')).body.items as { username: string; groups: { name: string }[] }[];
    expect(users.find((u) => u.username === 'fay')?.groups.map((g) => g.name)).toEqual(['Phone team']);
  });

  it('shows the Analyst the Phone team’s cases only, in the inbox they land on', async () => {
    fay = await (await newContext(browser)).newPage();
    await fay.goto(`${service.baseUrl}/`);
    await fay.getByLabel('Username or email').fill('fay');
    await fay.getByLabel('Password').fill(FAY_PASSWORD);
    await fay.getByRole('button', { name: 'Sign in' }).click();
    await fay.waitForURL(`${service.baseUrl}/cases`);
    await fay.getByRole('heading', { level: 1, name: 'Case inbox' }).waitFor();
    expect(await fay.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts()).toEqual(['Cases']);

    await expect.poll(() => inboxRows(fay).count()).toBe(3);
    const shown = (await inboxRows(fay).allInnerTexts()).join('\n');
    for (const id of cases['Shared phones']!) expect(shown).toMatch(new RegExp(`Case ${id}\\s+Shared phones`));
    expect(shown).not.toMatch(/Large transfers|Listed names/);
    // The filters offer only what the user may read.
    await expect.poll(() => fay.getByLabel('Data source').locator('option').allInnerTexts()).toEqual(['Any', 'Fraud']);
    await expect.poll(() => fay.getByLabel('Alert', { exact: true }).locator('option').allInnerTexts()).toEqual(['Any', 'Shared phones (Fraud)']);
    // And the API answers the same to them.
    const theirs = await ApiSession.signIn(service.baseUrl, 'fay', FAY_PASSWORD);
    const answered = (await theirs.call('GET', '/api/cases')).body.items as { id: number }[];
    expect(answered.map((c) => c.id).sort()).toEqual([...cases['Shared phones']!].sort());
  });

  it('assigns a case to the Analyst, filters on it through the URL, and comments on it on its page', async () => {
    taken = cases['Shared phones']![0]!;
    await fay.getByRole('button', { name: `Assign case ${taken} to me` }).click();
    const row = inboxRows(fay).filter({ has: fay.getByRole('link', { name: `Case ${taken}`, exact: true }) });
    await row.getByText('you', { exact: true }).waitFor();

    await fay.getByLabel('Assigned to').selectOption('me');
    await fay.getByRole('button', { name: 'Apply filters' }).click();
    await fay.waitForURL(`${service.baseUrl}/cases?assignee=me`);
    await expect.poll(() => inboxRows(fay).count()).toBe(1);
    // The view is the URL's: Back shows every case again, Forward the filtered view.
    await fay.goBack();
    await expect.poll(() => inboxRows(fay).count()).toBe(3);
    await fay.goForward();
    await expect.poll(() => inboxRows(fay).count()).toBe(1);
    expect(await fay.getByLabel('Assigned to').inputValue()).toBe('me');

    await fay.getByRole('link', { name: `Case ${taken}`, exact: true }).click();
    await fay.getByRole('heading', { level: 1, name: new RegExp(`^Case ${taken}`) }).waitFor();
    await fay.getByText('Assigned to you (fay)').waitFor();
    await fay.getByLabel('Comment', { exact: true }).fill('Called the bank: both numbers are the same family');
    await fay.getByRole('button', { name: 'Add comment' }).click();
    await fay.getByRole('status').filter({ hasText: 'Comment added.' }).waitFor();
    const log = fay.getByRole('table', { name: 'Action log' });
    await log.getByRole('row').filter({ hasText: 'commented' }).filter({ hasText: 'Called the bank' }).waitFor();
    expect(await log.getByRole('row').filter({ hasText: 'assigned to fay' }).innerText()).toMatch(/fay\s+assigned to fay/);
    await fay.locator('#case-facts').scrollIntoViewIfNeeded();
    await shoot(fay, 'case-assigned', { fullPage: true });
  });

  it('selects two cases in the inbox and confirms them at once, with the outcome of each', async () => {
    await nav(fay, 'Cases');
    await expect.poll(() => inboxRows(fay).count()).toBe(3);
    const [first, second] = cases['Shared phones']!;
    await fay.getByRole('checkbox', { name: `Select case ${first}`, exact: true }).check();
    await fay.getByRole('checkbox', { name: `Select case ${second}`, exact: true }).check();
    await fay.getByRole('heading', { name: '2 cases selected' }).waitFor();
    await fay.getByLabel('Action', { exact: true }).selectOption('confirm');
    await fay.getByLabel('Comment (optional)').fill('Same household, checked');
    await fay.getByRole('button', { name: 'Apply to 2 cases' }).click();
    const outcome = fay.getByRole('status').filter({ hasText: '2 cases of 2 confirmed.' });
    await outcome.waitFor();
    // In the list's order, newest first.
    expect((await outcome.getByRole('listitem').allInnerTexts()).sort()).toEqual([`Case ${first}: done`, `Case ${second}: done`].sort());
    await expect.poll(() => inboxRows(fay).filter({ hasText: 'confirmed' }).filter({ hasNotText: 'unconfirmed' }).count()).toBe(2);
    await shoot(fay, 'inbox', { fullPage: true });

    // Through the API: the statuses, the assignee, the comments in the log.
    for (const id of [first, second]) {
      const kase = (await api.call('GET', `/api/fraud/alerts/${alerts['Shared phones']}/cases/${id}`)).body;
      expect(kase.status).toBe('confirmed');
      expect(kase.user.username).toBe('fay');
    }
    const kase = (await api.call('GET', `/api/fraud/alerts/${alerts['Shared phones']}/cases/${taken}`)).body;
    expect(kase.assignedUser).toMatchObject({ username: 'fay', email: 'fay@example.com' });
    const actions = (await api.call('GET', `/api/fraud/alerts/${alerts['Shared phones']}/cases/${taken}/actions`)).body.items as { action: string; comment?: string; user: { username: string }; assignedUser?: { username: string } }[];
    expect(actions.map((a) => [a.action, a.user.username, a.comment ?? a.assignedUser?.username])).toEqual([
      ['assign', 'fay', 'fay'],
      ['comment', 'fay', 'Called the bank: both numbers are the same family'],
      ['confirm', 'fay', 'Same household, checked'],
    ]);
    const third = cases['Shared phones']![2]!;
    expect((await api.call('GET', `/api/fraud/alerts/${alerts['Shared phones']}/cases/${third}`)).body.status).toBe('unconfirmed');
  });

  it('shows the Admin who did what in the audit log, newest first, filtered by user', async () => {
    await nav(admin, 'Audit');
    const entries = admin.getByRole('table', { name: 'Audit entries' });
    await entries.getByRole('row').filter({ hasText: 'case.status' }).first().waitFor();
    const actions = await entries.getByRole('row').locator('td:nth-child(3)').allInnerTexts();
    // Newest first: the Analyst's confirmations, then their comment and assignment, then the Admin's groups.
    expect(actions.slice(0, 4)).toEqual(['case.status', 'case.status', 'case.comment', 'case.assign']);
    expect(actions).toEqual(expect.arrayContaining(['group.create', 'group.rename', 'group.delete', 'accessRights.set']));
    // before and after read as what changed: the rights saved for the Phone team, item by item.
    const rights = entries.getByRole('row').filter({ hasText: 'accessRights.set' }).filter({ hasText: `alert ${alerts['Shared phones']}: read` });
    expect(await rights.innerText()).toContain('nodeCategory Person: none');
    expect(await entries.getByRole('row').filter({ hasText: 'group.rename' }).innerText()).toMatch(/name: "Scratch" → "Scratch pad"/);

    await admin.getByLabel('Who').selectOption({ label: 'fay' });
    await admin.getByRole('button', { name: 'Search' }).click();
    await admin.waitForURL(/\/audit\?userId=\d+$/);
    await expect.poll(async () => (await entries.getByRole('row').locator('td:nth-child(2)').allInnerTexts()).length).toBe(4);
    expect(new Set(await entries.getByRole('row').locator('td:nth-child(2)').allInnerTexts())).toEqual(new Set(['fay']));
    await shoot(admin, 'audit');
  });

  it('sets how long the audit log is kept, on the settings page', async () => {
    await nav(admin, 'Settings');
    const retention = admin.getByLabel('Keep the audit log for (ms)');
    expect(await retention.inputValue()).toBe('31536000000');
    await retention.fill('2592000000');
    await admin.getByText('4 weeks 2 days; who changed').waitFor();
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    expect((await api.call('GET', '/api/config')).body.webhooks.auditRetentionDelayMs).toBe(2_592_000_000);
  });
});
