import type { AddressInfo } from 'node:net';
import { RestClient } from '@linkurious/rest-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { ApiClient, startTestService, type TestService } from '../support/test-service.js';

interface Item {
  id: number;
  alertId: number;
  status: string;
  createdAt: string;
  updatedAt: string;
  assignedUser?: { id: number; username: string };
  columns: Record<string, unknown>;
}

/**
 * The analysts' case inbox (issue 40, item 4): GET /api/cases across alerts and sources within the caller's rights,
 * its filters, sorts and cursor; one action on many cases; assignment through LKE's own client. Two sources: fraud
 * (alerts A with columns, and B) and sanctions (alert C); an Analyst, and members of custom groups written with SQL
 * (the groups API is not what this file tests): fred reads A alone, sam every alert of sanctions, nina none.
 */
describe('case inbox', () => {
  let t: TestService;
  let ana: ApiClient;
  let fred: ApiClient;
  let sam: ApiClient;
  let nina: ApiClient;
  const ids = { ana: 0, fred: 0, sam: 0, nina: 0 };
  let a: number;
  let b: number;
  let c: number;
  /** Case ids of each alert, oldest first. */
  const cases: Record<'a' | 'b' | 'c', number[]> = { a: [], b: [], c: [] };
  /** Where each case is, and the node its match names. */
  const place = new Map<number, { sourceKey: string; alertId: number; node: string }>();
  let client: RestClient;

  /** A user in one custom group of `sourceKey` with these alert rights, and no other group. */
  async function member(name: 'fred' | 'sam' | 'nina', sourceKey: string, alertRights: string[]): Promise<ApiClient> {
    const user = await t.userClient(name);
    ids[name] = (await user.get('/api/auth/me')).body.id;
    const { rows } = await t.db.query<{ id: number }>('INSERT INTO groups (name, builtin, source_key) VALUES ($1, false, $2) RETURNING id', [`${name}'s team`, sourceKey]);
    await t.db.query('DELETE FROM user_groups WHERE user_id = $1', [ids[name]]);
    await t.db.query('INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2)', [ids[name], rows[0]!.id]);
    for (const right of alertRights) {
      await t.db.query(`INSERT INTO group_access_rights (group_id, target_type, target_item_type, target_name, type) VALUES ($1, 'alert', '', $2, 'read')`, [rows[0]!.id, right]);
    }
    return user;
  }
  const page = async (caller: ApiClient, query = ''): Promise<{ items: Item[]; nextCursor: string | null }> => {
    const response = await caller.get(`/api/cases${query ? `?${query}` : ''}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  const idsOf = (items: Item[]) => items.map((i) => i.id);
  const all = () => [...cases.a, ...cases.b, ...cases.c];
  const countRows = async (sql: string, values: unknown[] = []) => Number((await t.db.query<{ n: number }>(sql, values)).rows[0]!.n);

  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new RestClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    await createSource(t.admin, 'fraud');
    await createSource(t.admin, 'sanctions');
    a = (await createAlert(t.admin, 'fraud', { title: 'Shared phones' })).id;
    b = (await createAlert(t.admin, 'fraud', { title: 'Round amounts' })).id;
    c = (await createAlert(t.admin, 'sanctions', { title: 'Listed names' })).id;
    await createWebhook(t.admin);
    for (const [key, sourceKey, alertId, n] of [['a', 'fraud', a, 6], ['b', 'fraud', b, 4], ['c', 'sanctions', c, 3]] as const) {
      const made = await reportMatches(t.admin, sourceKey, alertId, Array.from({ length: n }, (_, i) => ({ nodes: [`${key}${i}`] })));
      cases[key] = made.map((m) => m.id);
      made.forEach((m, i) => place.set(m.id, { sourceKey, alertId, node: `${key}${i}` }));
    }
    // Alert A's columns, and its matches' values: what a run of a graph alert records.
    await t.db.query(
      `UPDATE alerts SET columns = '[{"type":"number","columnTitle":"Amount","columnName":"amount"},{"type":"string","columnTitle":"Country","columnName":"country"}]' WHERE id = $1`,
      [a],
    );
    await t.db.query(
      `UPDATE alert_matches m SET columns = jsonb_build_object('amount', CASE WHEN m.case_id % 2 = 0 THEN 500 ELSE 9500.5 END, 'country', CASE WHEN m.case_id % 3 = 0 THEN 'FR' ELSE 'DE' END)
       WHERE m.case_id = ANY($1::int[])`,
      [cases.a],
    );
    // Fixed times, so orders are known: case i (by id) created on day i of 2026, updated 0 to 12 days later, in another order.
    await t.db.query(
      `UPDATE cases c SET created_at = '2026-01-01T00:00:00Z'::timestamptz + o.i * interval '1 day',
                          updated_at = '2026-01-01T00:00:00Z'::timestamptz + o.i * interval '1 day' + ((o.i * 7) % 13) * interval '1 day'
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS i FROM cases) o WHERE o.id = c.id`,
    );
    ana = await t.userClient('ana');
    ids.ana = (await ana.get('/api/auth/me')).body.id;
    fred = await member('fred', 'fraud', [String(a)]);
    sam = await member('sam', 'sanctions', ['*']);
    nina = await member('nina', 'fraud', []);
  });
  afterAll(async () => t?.close());

  it('answers every case the caller may read, and nothing else: Admin and Analyst all, a group member their alerts only', async () => {
    const everything = await page(ana, 'limit=200');
    expect(idsOf(everything.items).sort((x, y) => x - y)).toEqual(all().sort((x, y) => x - y));
    expect(everything.nextCursor).toBeNull();
    expect(idsOf((await page(t.admin, 'limit=200')).items).length).toBe(13);
    expect(idsOf((await page(fred, 'limit=200')).items).sort((x, y) => x - y)).toEqual(cases.a);
    expect(idsOf((await page(sam, 'limit=200')).items).sort((x, y) => x - y)).toEqual(cases.c);
    expect((await page(nina)).items).toEqual([]);
    const one = everything.items.find((i) => i.id === cases.a[0])!;
    expect(one).toEqual({
      id: cases.a[0],
      sourceKey: 'fraud',
      alertId: a,
      alertTitle: 'Shared phones',
      status: 'unconfirmed',
      matchCount: 1,
      url: `https://lke.example.com/alerts/${a}/case/${cases.a[0]}`,
      createdAt: '2026-01-02T00:00:00.000Z',
      updatedAt: '2026-01-09T00:00:00.000Z',
      columns: { amount: cases.a[0]! % 2 === 0 ? 500 : 9500.5, country: cases.a[0]! % 3 === 0 ? 'FR' : 'DE' },
    });
    // A source or an alert the caller may not read answers as one that does not exist, in the same words.
    const hidden = await fred.get('/api/cases?sourceKey=sanctions');
    const unknown = await fred.get('/api/cases?sourceKey=nowhere');
    expect(hidden.status).toBe(400);
    expect(hidden.body).toEqual({ key: 'dataSource_unavailable', message: 'no data source has the key "sanctions"', field: 'sourceKey' });
    expect(unknown.body.message).toBe('no data source has the key "nowhere"');
    const otherAlert = await fred.get(`/api/cases?alertId=${b}`);
    expect(otherAlert.body).toEqual({ key: 'invalid_parameter', message: `query parameter alertId: alert ${b} was not found`, field: 'alertId' });
    expect((await fred.get('/api/cases?alertId=99999')).body.message).toBe('query parameter alertId: alert 99999 was not found');
    expect((await t.anonymous.get('/api/cases')).status).toBe(401);
  });

  it('filters by status, source, alert, assignee, dates and column values', async () => {
    expect((await ana.post(`/api/fraud/alerts/${a}/cases/${cases.a[1]}/action`, { action: 'confirm' })).status).toBe(204);
    expect((await ana.post(`/api/fraud/alerts/${b}/cases/${cases.b[0]}/action`, { action: 'dismiss' })).status).toBe(204);
    const sorted = (items: Item[]) => idsOf(items).sort((x, y) => x - y);
    expect(sorted((await page(ana, 'status=confirmed')).items)).toEqual([cases.a[1]]);
    expect(sorted((await page(ana, 'status=confirmed,dismissed')).items)).toEqual([cases.a[1], cases.b[0]]);
    expect(sorted((await page(ana, 'sourceKey=fraud&limit=200')).items)).toEqual([...cases.a, ...cases.b]);
    expect(sorted((await page(ana, `alertId=${b}`)).items)).toEqual(cases.b);
    expect(sorted((await page(ana, `sourceKey=fraud&alertId=${b}&status=unconfirmed`)).items)).toEqual(cases.b.slice(1));

    expect((await ana.post(`/api/sanctions/alerts/${c}/cases/assignments`, { caseIds: [cases.c[0], cases.c[2]], userId: ids.ana })).status).toBe(204);
    expect(sorted((await page(ana, 'assignee=me')).items)).toEqual([cases.c[0], cases.c[2]]);
    expect(sorted((await page(t.admin, `assignee=${ids.ana}`)).items)).toEqual([cases.c[0], cases.c[2]]);
    expect(sorted((await page(ana, 'assignee=none&sourceKey=sanctions')).items)).toEqual([cases.c[1]]);
    expect((await page(sam, 'assignee=me')).items).toEqual([]);
    expect((await page(ana, 'assignee=me')).items[0]!.assignedUser).toEqual({ id: ids.ana, username: 'ana', email: 'ana@example.com' });

    // Case i (by id) was created on day i of 2026 (the first on 2 January), updated (i × 7) % 13 days later.
    const created = await page(ana, 'createdFrom=2026-01-04&createdTo=2026-01-06T00:00:00Z');
    expect(sorted(created.items)).toEqual(all().sort((x, y) => x - y).slice(2, 4));
    const updated = await page(ana, 'updatedFrom=2026-01-20T00:00:00.000Z&limit=200');
    expect(updated.items.length).toBeGreaterThan(0);
    expect(updated.items.every((i) => i.updatedAt >= '2026-01-20T00:00:00.000Z')).toBe(true);
    expect(updated.items.length + (await page(ana, 'updatedTo=2026-01-20T00:00:00.000Z&limit=200')).items.length).toBe(13);

    // Column values of the newest match: a number column compares as numbers, a string one as text.
    const fives = await page(ana, `alertId=${a}&column.amount=500`);
    expect(sorted(fives.items)).toEqual(cases.a.filter((id) => id % 2 === 0));
    expect(fives.items.every((i) => i.columns.amount === 500)).toBe(true);
    expect(sorted((await page(ana, `alertId=${a}&column.amount=9500.50`)).items)).toEqual(cases.a.filter((id) => id % 2 === 1));
    expect(sorted((await page(fred, `alertId=${a}&column.country=FR&column.amount=500`)).items)).toEqual(cases.a.filter((id) => id % 6 === 0));
  });

  it('sorts by updatedAt (the default), createdAt or id, newest first unless asc', async () => {
    const rows = (await t.db.query<{ id: number; created: string; updated: string }>('SELECT id, created_at AS created, updated_at AS updated FROM cases')).rows;
    const by = (key: 'created' | 'updated' | 'id', direction: 1 | -1) =>
      [...rows].sort((x, y) => direction * (key === 'id' ? x.id - y.id : new Date(x[key]).getTime() - new Date(y[key]).getTime() || x.id - y.id)).map((r) => r.id);
    expect(idsOf((await page(ana, 'limit=200')).items)).toEqual(by('updated', -1));
    expect(idsOf((await page(ana, 'limit=200&sort=updatedAt&direction=asc')).items)).toEqual(by('updated', 1));
    expect(idsOf((await page(ana, 'limit=200&sort=createdAt')).items)).toEqual(by('created', -1));
    expect(idsOf((await page(ana, 'limit=200&sort=createdAt&direction=asc')).items)).toEqual(by('created', 1));
    expect(idsOf((await page(ana, 'limit=200&sort=id')).items)).toEqual(by('id', -1));
    expect(idsOf((await page(ana, 'limit=200&sort=id&direction=asc')).items)).toEqual(by('id', 1));
  });

  it('refuses every bad parameter with 400 naming it', async () => {
    const cursor = (await page(ana, 'limit=1')).nextCursor!;
    const bad: [string, string][] = [
      ['status=closed', 'status'],
      ['status=', 'status'],
      ['sort=title', 'sort'],
      ['direction=up', 'direction'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=1e2', 'limit'],
      ['alertId=0', 'alertId'],
      ['alertId=abc', 'alertId'],
      ['sourceKey=a%20b', 'sourceKey'],
      ['assignee=you', 'assignee'],
      ['assignee=99999999999', 'assignee'],
      ['createdFrom=yesterday', 'createdFrom'],
      ['updatedTo=2026-13-45', 'updatedTo'],
      ['createdFrom=2026-02-01&createdTo=2026-01-01', 'createdFrom'],
      ['cursor=!!', 'cursor'],
      ['cursor=bm90IGpzb24', 'cursor'],
      [`cursor=${cursor}&sort=createdAt`, 'cursor'],
      [`cursor=${cursor}&direction=asc`, 'cursor'],
      ['column.amount=500', 'column.amount'],
      [`alertId=${a}&column.weight=5`, 'column.weight'],
      [`alertId=${a}&column.amount=lots`, 'column.amount'],
      ['stauts=confirmed', 'stauts'],
    ];
    for (const [query, field] of bad) {
      const response = await ana.get(`/api/cases?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.field, `${query}: ${response.body.message}`).toBe(field);
      expect(response.body.message, query).toContain(field);
    }
  });

  it('pages with the cursor while cases change: no case twice, every case left alone once', async () => {
    for (const direction of ['desc', 'asc']) {
      const seen: number[] = [];
      const changed = new Set<number>();
      let cursor: string | null = null;
      for (let n = 0; n < 30; n++) {
        const got: { items: Item[]; nextCursor: string | null } = await page(ana, `limit=2&direction=${direction}${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...idsOf(got.items));
        cursor = got.nextCursor;
        if (!cursor) break;
        if (n === 1) {
          // A new match on a case not seen yet and on one seen already (their updatedAt is now), a status change of
          // another seen one, and a new case.
          const [unseen, seenOne, seenOther] = [all().find((id) => !seen.includes(id))!, seen[0]!, seen[1]!];
          for (const id of [unseen, seenOne]) {
            const { sourceKey, alertId, node } = place.get(id)!;
            expect(await reportMatches(t.admin, sourceKey, alertId, [{ nodes: [node] }])).toEqual([{ id, created: false }]);
          }
          const other = place.get(seenOther)!;
          const action = await ana.post(`/api/${other.sourceKey}/alerts/${other.alertId}/cases/${seenOther}/action`, { action: 'in-progress' });
          expect([204, 409]).toContain(action.status);
          const fresh = await reportMatches(t.admin, 'sanctions', c, [{ nodes: [`new-${direction}`] }]);
          place.set(fresh[0]!.id, { sourceKey: 'sanctions', alertId: c, node: `new-${direction}` });
          for (const id of [unseen, seenOne, seenOther, fresh[0]!.id]) changed.add(id);
        }
      }
      expect(new Set(seen).size, `${direction}: ${seen}`).toBe(seen.length);
      const untouched = all().filter((id) => !changed.has(id));
      expect(untouched.filter((id) => !seen.includes(id)), direction).toEqual([]);
      cases.c.push(...[...changed].filter((id) => !all().includes(id)));
    }
  });

  it('acts on many cases at once: each changed on its own, with its event; a case the caller may not read is not found', async () => {
    const [target, already] = [cases.a[2]!, cases.a[1]!];
    // Whatever the tests before did to them: one to change, one already confirmed.
    await t.db.query(`UPDATE cases SET status = CASE WHEN id = $1 THEN 'unconfirmed' ELSE 'confirmed' END WHERE id = ANY($2::int[])`, [target, [target, already]]);
    const statusEvents = (caseId: number) => countRows(`SELECT count(*) AS n FROM webhook_events WHERE event_type = 'caseStatusChange' AND case_id = $1`, [caseId]);
    const eventsBefore = await statusEvents(target);
    const hiddenBefore = (await t.db.query<{ status: string }>('SELECT status FROM cases WHERE id = $1', [cases.b[1]])).rows[0]!.status;
    const response = await fred.post('/api/cases/action', { caseIds: [target, already, cases.b[1], 999999], action: 'confirm', comment: 'all checked' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({
      results: [
        { caseId: target, outcome: 'done' },
        { caseId: already, outcome: 'redundant' },
        { caseId: cases.b[1], outcome: 'not_found' },
        { caseId: 999999, outcome: 'not_found' },
      ],
    });
    expect(await statusEvents(target)).toBe(eventsBefore + 1);
    expect((await t.db.query<{ status: string }>('SELECT status FROM cases WHERE id = $1', [cases.b[1]])).rows[0]!.status).toBe(hiddenBefore);
    const log = (await fred.get(`/api/fraud/alerts/${a}/cases/${target}/actions`)).body.items;
    expect(log[log.length - 1]).toMatchObject({ action: 'confirm', user: { username: 'fred' }, comment: 'all checked' });

    const comments = await ana.post('/api/cases/action', { caseIds: [cases.b[2], cases.c[1]], action: 'comment', comment: 'Seen in the weekly review' });
    expect(comments.body.results).toEqual([
      { caseId: cases.b[2], outcome: 'done' },
      { caseId: cases.c[1], outcome: 'done' },
    ]);

    const actionsBefore = await countRows('SELECT count(*) AS n FROM case_actions');
    for (const [body, field] of [
      [{ caseIds: [], action: 'confirm' }, 'caseIds'],
      [{ caseIds: Array.from({ length: 101 }, (_, i) => i + 1), action: 'confirm' }, 'caseIds'],
      [{ caseIds: [target, target], action: 'dismiss' }, 'caseIds'],
      [{ caseIds: [target], action: 'close' }, 'action'],
      [{ caseIds: [target], action: 'comment' }, 'comment'],
      [{ caseIds: [target], action: 'comment', comment: '  ' }, 'comment'],
    ] as const) {
      const refused = await ana.post('/api/cases/action', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.field).toBe(field);
    }
    expect(await countRows('SELECT count(*) AS n FROM case_actions')).toBe(actionsBefore);
  });

  it("assigns cases through LKE's client to a user who may read them; the case, the inbox, the action log and the audit say so", async () => {
    expect((await client.auth.login({ usernameOrEmail: 'ana', password: 'ana-password' })).isSuccess()).toBe(true);
    const eventsBefore = await countRows('SELECT count(*) AS n FROM webhook_events');
    const [first, second] = [cases.a[3]!, cases.a[4]!];
    const assigned = await client.alert.assignCases({ sourceKey: 'fraud', alertId: a, caseIds: [first, second], userId: ids.fred });
    expect(assigned.isSuccess(), JSON.stringify(assigned.body)).toBe(true);
    const kase = await client.alert.getCase({ sourceKey: 'fraud', alertId: a, caseId: first });
    expect((kase.body as { assignedUser: unknown }).assignedUser).toEqual({ id: ids.fred, username: 'fred', email: 'fred@example.com' });
    expect(idsOf((await page(fred, 'assignee=me')).items).sort((x, y) => x - y)).toEqual([first, second]);
    const log = (await fred.get(`/api/fraud/alerts/${a}/cases/${first}/actions`)).body.items;
    expect(log[log.length - 1]).toMatchObject({ action: 'assign', user: { username: 'ana' }, assignedUser: { id: ids.fred, username: 'fred' } });
    const audit = await t.db.query<{ username: string; before: unknown; after: unknown; source_key: string }>(
      `SELECT username, before, after, source_key FROM audit_log WHERE action = 'case.assign' AND target_id = $1 ORDER BY id`,
      [String(first)],
    );
    expect(audit.rows).toEqual([{ username: 'ana', source_key: 'fraud', before: { alertId: a, assignedUserId: null }, after: { alertId: a, assignedUserId: ids.fred } }]);

    // Again to the same user: nothing changes, nothing is logged.
    expect((await client.alert.assignCases({ sourceKey: 'fraud', alertId: a, caseIds: [first], userId: ids.fred })).isSuccess()).toBe(true);
    expect((await fred.get(`/api/fraud/alerts/${a}/cases/${first}/actions`)).body.items.length).toBe(log.length);

    // Unassigning (ext: userId null).
    expect((await ana.post(`/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [second], userId: null })).status).toBe(204);
    const unassigned = (await ana.get(`/api/fraud/alerts/${a}/cases/${second}`)).body;
    expect(unassigned.assignedUser).toBeUndefined();
    const secondLog = (await ana.get(`/api/fraud/alerts/${a}/cases/${second}/actions`)).body.items;
    expect(secondLog[secondLog.length - 1]).toMatchObject({ action: 'assign', assignedUser: null });

    // LKE's bulk call, across two alerts of the source.
    const bulk = await client.alert.bulkAssignCases({ sourceKey: 'fraud', casesPerAlert: [{ alertId: a, caseIds: [second] }, { alertId: b, caseIds: [cases.b[3]!] }], assignedUserId: ids.ana });
    expect(bulk.isSuccess(), JSON.stringify(bulk.body)).toBe(true);
    expect(idsOf((await page(ana, 'assignee=me&sourceKey=fraud')).items).sort((x, y) => x - y)).toEqual([second, cases.b[3]]);

    // Who may take them: the users who read the alert.
    const users = await client.alert.getAlertUsers({ sourceKey: 'fraud', alertId: a });
    expect(users.isSuccess(), JSON.stringify(users.body)).toBe(true);
    const byName = new Map((users.body as { username: string; hasAssignedCases: boolean }[]).map((u) => [u.username, u]));
    expect([...byName.keys()].sort()).toEqual(['admin', 'ana', 'fred']);
    expect(byName.get('fred')).toEqual({ id: ids.fred, username: 'fred', email: 'fred@example.com', hasAssignedCases: true });
    expect(byName.get('admin')!.hasAssignedCases).toBe(false);
    expect((await ana.get(`/api/fraud/alerts/${b}/users`)).body.map((u: { username: string }) => u.username).sort()).toEqual(['admin', 'ana']);

    expect(await countRows('SELECT count(*) AS n FROM webhook_events')).toBe(eventsBefore);
  });

  it('refuses an assignee who may not read the alert, a case of another alert, an alert the caller may not read: all or nothing', async () => {
    const assignedBefore = (await t.db.query<{ id: number; assigned_user_id: number | null }>('SELECT id, assigned_user_id FROM cases ORDER BY id')).rows;
    const refusals: [ApiClient, string, unknown, number, string | undefined, string][] = [
      [ana, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [cases.a[0]], userId: ids.sam }, 400, 'userId', `userId ${ids.sam} is not a user who may read alert ${a}`],
      [ana, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [cases.a[0]], userId: 99999 }, 400, 'userId', 'userId 99999 is not a user who may read alert'],
      [ana, '/api/fraud/alerts/cases/assignments', { casesPerAlert: [{ alertId: a, caseIds: [cases.a[0]] }, { alertId: b, caseIds: [cases.b[1]] }], assignedUserId: ids.fred }, 400, 'assignedUserId', `assignedUserId ${ids.fred} is not a user who may read alert ${b}`],
      [ana, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [cases.a[0], cases.b[1]], userId: ids.ana }, 404, undefined, `case ${cases.b[1]} was not found`],
      [ana, '/api/fraud/alerts/cases/assignments', { casesPerAlert: [{ alertId: a, caseIds: [cases.a[0]] }, { alertId: c, caseIds: [cases.c[1]] }], assignedUserId: ids.ana }, 404, undefined, `alert ${c} was not found`],
      [fred, `/api/fraud/alerts/${b}/cases/assignments`, { caseIds: [cases.b[1]], userId: ids.fred }, 404, undefined, `alert ${b} was not found`],
      [fred, '/api/fraud/alerts/cases/assignments', { casesPerAlert: [{ alertId: a, caseIds: [cases.a[0]] }, { alertId: b, caseIds: [cases.b[1]] }], assignedUserId: ids.fred }, 404, undefined, `alert ${b} was not found`],
      [sam, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [cases.a[0]], userId: ids.sam }, 400, undefined, 'no data source has the key "fraud"'],
      [ana, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [], userId: ids.ana }, 400, 'caseIds', 'caseIds'],
      [ana, `/api/fraud/alerts/${a}/cases/assignments`, { caseIds: [cases.a[0]] }, 400, 'userId', 'userId'],
      [ana, '/api/fraud/alerts/cases/assignments', { casesPerAlert: [], assignedUserId: ids.ana }, 400, 'casesPerAlert', 'casesPerAlert'],
    ];
    for (const [caller, url, body, status, field, message] of refusals) {
      const response = await caller.post(url, body);
      expect(response.status, `${url} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`).toBe(status);
      expect(response.body.field).toBe(field);
      expect(response.body.message).toContain(message);
    }
    expect((await fred.get(`/api/fraud/alerts/${b}/users`)).status).toBe(404);
    expect((await ana.get('/api/fraud/alerts/99999/users')).status).toBe(404);
    expect((await t.db.query('SELECT id, assigned_user_id FROM cases ORDER BY id')).rows).toEqual(assignedBefore);
  });

  it("leaves the routes of a data source named like the inbox's paths to it", async () => {
    await createSource(t.admin, 'cases');
    const alert = await createAlert(t.admin, 'cases');
    const [made] = await reportMatches(t.admin, 'cases', alert.id, [{ nodes: ['x'] }]);
    expect((await ana.get('/api/cases/alerts')).body.items.map((i: { id: number }) => i.id)).toEqual([alert.id]);
    expect((await ana.post(`/api/cases/alerts/${alert.id}/cases/${made!.id}/action`, { action: 'confirm' })).status).toBe(204);
    expect((await ana.post('/api/cases/alerts/cases/assignments', { casesPerAlert: [{ alertId: alert.id, caseIds: [made!.id] }], assignedUserId: ids.ana })).status).toBe(204);
    expect((await page(ana, 'sourceKey=cases')).items).toMatchObject([{ id: made!.id, status: 'confirmed', assignedUser: { id: ids.ana } }]);
  });

  it('forgets the assignee whose user is deleted', async () => {
    const gone = await t.userClient('gone');
    const goneId = (await gone.get('/api/auth/me')).body.id;
    expect((await ana.post(`/api/sanctions/alerts/${c}/cases/assignments`, { caseIds: [cases.c[1]], userId: goneId })).status).toBe(204);
    expect((await t.admin.delete(`/api/admin/users/${goneId}`)).status).toBe(204);
    const kase = (await ana.get(`/api/sanctions/alerts/${c}/cases/${cases.c[1]}`)).body;
    expect(kase.assignedUser).toBeUndefined();
    expect((await page(ana, `assignee=${goneId}`)).items).toEqual([]);
  });
});
