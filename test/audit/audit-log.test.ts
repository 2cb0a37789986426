import { beforeAll, describe, expect, it } from 'vitest';
import { cleanupDeliveries } from '../../src/delivery/cleanup.js';
import { CLEANUP_BATCH } from '../../src/outbox/purge.js';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { ApiClient, useTestService } from '../support/test-service.js';

const DAY = 86_400_000;
const basic = (email: string, apiKey: string) => ({ authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` });

interface Entry {
  id: number;
  at: string;
  user: { id: number; username: string } | null;
  application?: { id: number; name: string };
  action: string;
  targetType: string;
  targetId: string;
  sourceKey?: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

/** Who changed what on alerts and cases, read by Admins (docs/api.md, Audit log; issue 40, item 5). */
describe('the audit log', () => {
  const t = useTestService();
  let analyst: ApiClient;
  let throughKey: ApiClient;
  let adminId: number;
  let anaId: number;
  let application: { id: number; name: string };
  let caseBase: string;
  let caseId: number;

  /** The entries the filters select, all pages read (newest first). */
  async function audit(query = ''): Promise<Entry[]> {
    const answer = await t.admin.get(`/api/admin/audit?limit=200${query ? `&${query}` : ''}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.nextCursor).toBeNull();
    return answer.body.items;
  }
  const newestId = async () => (await audit())[0]?.id ?? 0;

  beforeAll(async () => {
    adminId = (await t.admin.get('/api/auth/me')).body.id;
    analyst = await t.userClient('ana');
    anaId = (await analyst.get('/api/auth/me')).body.id;
    const created = await t.admin.post('/api/admin/applications', { name: 'case-sync', groups: [2] });
    expect(created.status).toBe(201);
    application = { id: created.body.id, name: 'case-sync' };
    throughKey = new ApiClient(t.app, basic('ana@example.com', created.body.apiKey));

    expect((await t.admin.post('/api/admin/sources', { key: 'fraud', name: 'Fraud', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of ['CREATE NODE TABLE Account(id INT64, PRIMARY KEY(id))', 'CREATE (:Account {id: 1})']) {
      expect((await t.admin.post('/api/fraud/graph/run/query', { query })).status).toBe(200);
    }
    await createSource(t.admin, 'plain');
    const alert = await createAlert(t.admin, 'plain');
    caseId = (await reportMatches(t.admin, 'plain', alert.id, [{ nodes: ['n1'] }]))[0]!.id;
    caseBase = `/api/plain/alerts/${alert.id}/cases/${caseId}`;
  });

  it("records an alert's creation, change, run and deletion by whom, with its shape before and after, queries included", async () => {
    const created = await t.admin.post('/api/admin/fraud/alerts', { title: 'Accounts', queries: [{ name: 'all', query: 'MATCH (a:Account) RETURN a', dialect: 'cypher' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: number = created.body.id;
    const firstQuery = { id: created.body.queries[0].id, name: 'all', query: 'MATCH (a:Account) RETURN a', dialect: 'cypher', description: '' };
    const shape = { id, sourceKey: 'fraud', title: 'Accounts', description: '', enabled: true, cron: null, columns: [], queries: [firstQuery], target: null, maxMatches: null, timeoutMs: null };

    const changed = await t.admin.patch(`/api/admin/fraud/alerts/${id}`, { title: 'Accounts, all of them', maxMatches: 10, queries: [{ name: 'one', query: 'MATCH (a:Account {id: 1}) RETURN a', dialect: 'cypher' }] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const secondQuery = { id: changed.body.queries[1].id, name: 'one', query: 'MATCH (a:Account {id: 1}) RETURN a', dialect: 'cypher', description: '' };
    const shapeAfter = { ...shape, title: 'Accounts, all of them', maxMatches: 10, queries: [firstQuery, secondQuery] };
    // A change to the values it already has changes nothing, and is not recorded.
    expect((await t.admin.patch(`/api/admin/fraud/alerts/${id}`, { title: 'Accounts, all of them' })).status).toBe(200);
    expect((await t.admin.post(`/api/admin/fraud/alerts/${id}/run`, { waitForRun: true })).body).toEqual({ alreadyRunning: false });
    expect((await t.admin.delete(`/api/admin/fraud/alerts/${id}`)).status).toBe(204);

    const entries = await audit(`targetType=alert&targetId=${id}`);
    const admin = { id: adminId, username: 'admin' };
    const about = { user: admin, targetType: 'alert', targetId: String(id), sourceKey: 'fraud' };
    expect(entries).toEqual([
      { id: expect.any(Number), at: expect.any(String), ...about, action: 'alert.delete', before: shapeAfter },
      { id: expect.any(Number), at: expect.any(String), ...about, action: 'alert.run', after: { waitForRun: true } },
      { id: expect.any(Number), at: expect.any(String), ...about, action: 'alert.update', before: shape, after: shapeAfter },
      { id: expect.any(Number), at: expect.any(String), ...about, action: 'alert.create', after: shape },
    ]);
    // Newest first, and each entry's time is when its change was made.
    expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((a, b) => b - a));
    expect(Date.now() - Date.parse(entries[3]!.at)).toBeLessThan(60_000);
    // What the run found (cases, matches) is the service's own work: not in the log.
    expect((await audit('sourceKey=fraud')).map((e) => e.action)).toEqual(['alert.delete', 'alert.run', 'alert.update', 'alert.create']);
  });

  it('records status changes and comments on a case, by the user, and the application when an API key acted', async () => {
    expect((await analyst.post(`${caseBase}/action`, { action: 'confirm', comment: 'checked with the bank' })).status).toBe(204);
    expect((await throughKey.post(`${caseBase}/action`, { action: 'comment', comment: 'from the tracker' })).status).toBe(204);
    expect((await throughKey.post(`${caseBase}/action`, { action: 'in-progress' })).status).toBe(204);

    const entries = await audit(`targetType=case&targetId=${caseId}`);
    const alertId = Number(caseBase.split('/')[4]);
    const ana = { id: anaId, username: 'ana' };
    const about = { id: expect.any(Number), at: expect.any(String), user: ana, targetType: 'case', targetId: String(caseId), sourceKey: 'plain' };
    expect(entries).toEqual([
      { ...about, application, action: 'case.status', before: { alertId, status: 'confirmed' }, after: { alertId, status: 'in-progress' } },
      { ...about, application, action: 'case.comment', after: { alertId, comment: 'from the tracker' } },
      { ...about, action: 'case.status', before: { alertId, status: 'unconfirmed' }, after: { alertId, status: 'confirmed', comment: 'checked with the bank' } },
    ]);
    // The case itself was opened by a match report: recording matches is not audited.
    expect(entries.some((e) => e.action !== 'case.status' && e.action !== 'case.comment')).toBe(false);
  });

  it('records nothing for a change that was refused, and makes no change whose entry could not be recorded', async () => {
    const alert = await createAlert(t.admin, 'fraud', { title: 'Kept', queries: [{ name: 'q', query: 'MATCH (a:Account) RETURN a', dialect: 'cypher' }] });
    const before = await newestId();
    const badQuery = await t.admin.patch(`/api/admin/fraud/alerts/${alert.id}`, { title: 'Renamed', queries: [{ name: 'bad', query: 'MATCH (a RETURN a', dialect: 'cypher' }] });
    expect(badQuery.status).toBe(400);
    expect((await t.admin.patch(`/api/admin/fraud/alerts/${alert.id}`, { title: '   ' })).status).toBe(400);
    expect((await t.admin.delete('/api/admin/fraud/alerts/999999')).status).toBe(404);
    expect((await analyst.post(`${caseBase}/action`, { action: 'in-progress' })).status).toBe(409);
    expect((await analyst.post(`${caseBase}/action`, { action: 'comment', comment: ' ' })).status).toBe(400);
    expect(await newestId()).toBe(before);
    expect((await t.admin.get(`/api/fraud/alerts/${alert.id}`)).body.title).toBe('Kept');

    // The change and its entry are one transaction: when the entry cannot be written, the alert is not deleted.
    await t.db.query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no audit today'; END $$`);
    await t.db.query(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW WHEN (NEW.action = 'alert.delete') EXECUTE FUNCTION refuse_audit()`);
    try {
      expect((await t.admin.delete(`/api/admin/fraud/alerts/${alert.id}`)).status).toBe(500);
    } finally {
      await t.db.query('DROP TRIGGER refuse_audit ON audit_log');
      await t.db.query('DROP FUNCTION refuse_audit()');
    }
    expect((await t.admin.get(`/api/fraud/alerts/${alert.id}`)).status).toBe(200);
    expect(await newestId()).toBe(before);
  });

  it('filters by target, user, data source, action and time, all given holding', async () => {
    const all = await audit();
    // The alert of beforeAll, the four of the first test and the alert kept by the third; the three case entries of the
    // second. (Creating users and API keys records their groups' changes too: not counted here.)
    expect((await audit('targetType=alert')).length).toBe(6);
    expect((await audit('targetType=case')).length).toBe(3);
    expect((await audit(`userId=${anaId}`)).every((e) => e.user?.id === anaId)).toBe(true);
    expect((await audit(`userId=${anaId}`)).length).toBe(3);
    expect((await audit('action=case.comment')).map((e) => e.after?.comment)).toEqual(['from the tracker']);
    expect((await audit(`userId=${adminId}&action=alert.create&sourceKey=fraud`)).map((e) => e.after?.title)).toEqual(['Kept', 'Accounts']);
    expect((await audit('sourceKey=plain&targetType=alert')).map((e) => e.action)).toEqual(['alert.create']);
    expect(await audit('targetType=case&targetId=999999')).toEqual([]);

    // `from` includes the instant given, `to` excludes it.
    const pivot = all.find((e) => e.action === 'case.comment')!;
    const from = await audit(`from=${encodeURIComponent(pivot.at)}`);
    const to = await audit(`to=${encodeURIComponent(pivot.at)}`);
    expect(from.map((e) => e.id)).toContain(pivot.id);
    expect(to.map((e) => e.id)).not.toContain(pivot.id);
    expect(new Set([...from, ...to].map((e) => e.id)).size).toBe(all.length);
    expect(await audit(`from=${encodeURIComponent(new Date(Date.now() + DAY).toISOString())}`)).toEqual([]);
  });

  it('pages newest first with a cursor; entries written meanwhile do not move the later pages', async () => {
    const all = (await audit()).map((e) => e.id);
    const first = await t.admin.get('/api/admin/audit?limit=5');
    expect(first.body.items.map((e: Entry) => e.id)).toEqual(all.slice(0, 5));
    expect(first.body.nextCursor).toBe(String(all[4]));
    expect((await analyst.post(`${caseBase}/action`, { action: 'comment', comment: 'written between two pages' })).status).toBe(204);
    const seen: number[] = [...first.body.items.map((e: Entry) => e.id)];
    let cursor: string | null = first.body.nextCursor;
    while (cursor) {
      const page = await t.admin.get(`/api/admin/audit?limit=5&cursor=${cursor}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeGreaterThan(0);
      seen.push(...page.body.items.map((e: Entry) => e.id));
      cursor = page.body.nextCursor;
    }
    expect(seen).toEqual(all);
    // The default page is 50 entries.
    expect((await t.admin.get('/api/admin/audit')).body.items.length).toBe(Math.min(50, all.length + 1));
  });

  it.each([
    ['limit=201', 'limit'],
    ['limit=0', 'limit'],
    ['cursor=abc', 'cursor'],
    ['from=yesterday', 'from'],
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
    ['targetId=3', 'targetId'],
    ['targetType=webhook', 'targetType'],
    ['action=drop%20table', 'action'],
    ['userId=0', 'userId'],
    ['sourceKey=a%20b', 'sourceKey'],
    [`targetType=case&targetId=${'9'.repeat(129)}`, 'targetId'],
  ])('refuses %s, naming %s', async (query, field) => {
    const answer = await t.admin.get(`/api/admin/audit?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.key).toBe('invalid_parameter');
    expect(answer.body.message).toContain(field);
  });

  it('is read by Admins only: 401 without a session, 403 to an Analyst and to their API key', async () => {
    expect((await t.anonymous.get('/api/admin/audit')).status).toBe(401);
    const refused = await analyst.get('/api/admin/audit');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ key: 'forbidden', message: 'GET /api/admin/audit needs the Admin group' });
    expect((await throughKey.get('/api/admin/audit?targetType=case')).status).toBe(403);
  });

  it('removes on the cleanup schedule only the entries older than auditRetentionDelayMs, in batches', async () => {
    expect((await t.admin.get('/api/config')).body.webhooks.auditRetentionDelayMs).toBe(365 * DAY);
    const kept = await audit();
    // More than a batch of year-old entries, and a few a month old, written as the log would have them.
    await t.db.query(
      `INSERT INTO audit_log (at, user_id, username, action, target_type, target_id, source_key)
       SELECT now() - interval '400 days' - i * interval '1 second', $1, 'admin', 'alert.update', 'alert', '1', 'fraud' FROM generate_series(1, $2) AS i`,
      [adminId, CLEANUP_BATCH + 3],
    );
    const monthOld = 'targetType=accessRightsSettings&targetId=month-old';
    await t.db.query(
      `INSERT INTO audit_log (at, user_id, username, action, target_type, target_id) SELECT now() - interval '30 days', $1, 'admin', 'accessRightsSettings.set', 'accessRightsSettings', 'month-old' FROM generate_series(1, 2)`,
      [adminId],
    );
    const first = await cleanupDeliveries(t.db, t.service.settings.webhooks);
    expect(first.audit).toBe(CLEANUP_BATCH + 3);
    expect((await audit(monthOld)).length).toBe(2);
    expect((await audit()).length).toBe(kept.length + 2);

    // A shorter retention, set through the API, takes the month-old entries too, and nothing newer.
    expect((await t.admin.post('/api/config', { path: 'webhooks.auditRetentionDelayMs', configuration: 7 * DAY })).status).toBe(204);
    try {
      expect((await cleanupDeliveries(t.db, t.service.settings.webhooks)).audit).toBe(2);
    } finally {
      await t.admin.post('/api/config', { path: 'webhooks.auditRetentionDelayMs', configuration: 365 * DAY });
    }
    expect((await audit()).map((e) => e.id)).toEqual(kept.map((e) => e.id));
  });
});
