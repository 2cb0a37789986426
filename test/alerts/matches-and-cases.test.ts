import { beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { ApiClient, useTestService } from '../support/test-service.js';

describe('alerts, matches and cases (docs/api.md, Data sources, alerts, matches and cases)', () => {
  const t = useTestService();
  let analyst: ApiClient;
  let alertId: number;
  beforeAll(async () => {
    analyst = await t.userClient('ana');
    await createSource(t.admin, 'b4675b85', 'Bank graph');
    alertId = (await createAlert(t.admin, 'b4675b85')).id;
  });

  it('registers data sources and lists them to signed-in users', async () => {
    const listed = await analyst.get('/api/dataSources');
    expect(listed.body).toEqual([{ key: 'b4675b85', name: 'Bank graph', connected: true }]);
    expect((await t.anonymous.get('/api/dataSources')).status).toBe(401);
  });

  it.each([
    [{ key: 'has space', name: 'x' }, 400, 'invalid_parameter', 'key "has space" must match ^[A-Za-z0-9_-]{1,64}$'],
    [{ key: 'k'.repeat(65), name: 'x' }, 400, 'invalid_parameter', `key "${'k'.repeat(65)}" must match ^[A-Za-z0-9_-]{1,64}$`],
    [{ key: 'admin', name: 'x' }, 400, 'invalid_parameter', 'key "admin" is reserved by the API\'s own paths: choose another'],
    [{ key: 'b4675b85', name: 'again' }, 409, 'already_exists', 'a data source with key "b4675b85" already exists'],
  ])('refuses data source %j', async (body, status, key, message) => {
    const response = await t.admin.post('/api/admin/sources', body);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ key, message });
  });

  it('creates alerts with "" for an absent description, and reads them', async () => {
    const created = await t.admin.post('/api/admin/b4675b85/alerts', { title: 'No description' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sourceKey: 'b4675b85', title: 'No description', description: '', enabled: true });
    expect((await analyst.get(`/api/b4675b85/alerts/${created.body.id}`)).body).toEqual(created.body);
    const listed = await analyst.get('/api/b4675b85/alerts');
    expect(listed.body.items.map((a: { id: number }) => a.id)).toContain(created.body.id);
  });

  it('refuses alerts on unknown sources (dataSource_unavailable) and unknown ids (not_found)', async () => {
    const unknown = await t.admin.post('/api/admin/nosuch/alerts', { title: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ key: 'dataSource_unavailable', message: 'no data source has the key "nosuch"' });
    expect((await analyst.get('/api/nosuch/alerts')).body.key).toBe('dataSource_unavailable');
    const missing = await analyst.get('/api/b4675b85/alerts/99999');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ key: 'not_found', message: 'alert 99999 was not found' });
    const noTitle = await t.admin.post('/api/admin/b4675b85/alerts', { description: 'x' });
    expect(noTitle.body).toEqual({ key: 'invalid_parameter', message: 'field title is required', field: 'title' });
  });

  it('creates a case for a new target and a newMatch for a known one, answering in order', async () => {
    const first = await reportMatches(t.admin, 'b4675b85', alertId, [
      { nodes: ['3', '1', '2', '1'], edges: ['5', '4'] },
      { nodes: ['9'] },
      // Same target as the first, in another order: the same case.
      { nodes: ['2', '3', '1'], edges: ['4', '5', '5'] },
    ]);
    expect(first.map((c) => c.created)).toEqual([true, true, false]);
    expect(first[2]!.id).toBe(first[0]!.id);
    const again = await reportMatches(t.admin, 'b4675b85', alertId, [{ nodes: ['9'] }]);
    expect(again).toEqual([{ id: first[1]!.id, created: false }]);

    const kase = (await analyst.get(`/api/b4675b85/alerts/${alertId}/cases/${first[0]!.id}`)).body;
    expect(kase).toMatchObject({
      id: first[0]!.id,
      sourceKey: 'b4675b85',
      alertId,
      status: 'unconfirmed',
      nodes: ['1', '2', '3'],
      edges: ['4', '5'],
      matchCount: 2,
      url: `https://lke.example.com/alerts/${alertId}/case/${first[0]!.id}`,
    });
    expect(kase.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(kase.statusUpdateDate).toBeUndefined();
    expect(Date.parse(kase.updatedAt)).toBeGreaterThanOrEqual(Date.parse(kase.createdAt));
  });

  it('keeps cases apart per alert: the same target in another alert is another case', async () => {
    const other = await createAlert(t.admin, 'b4675b85', { title: 'Other' });
    const [a] = await reportMatches(t.admin, 'b4675b85', other.id, [{ nodes: ['9'] }]);
    expect(a!.created).toBe(true);
  });

  it.each([
    [{ matches: [{ nodes: [], edges: [] }] }, 'matches[0] must have at least one node or edge ID'],
    [{ matches: [{ nodes: ['1'] }, {}] }, 'matches[1] must have at least one node or edge ID'],
    [{ matches: [{ nodes: [''] }] }, 'field matches[0].nodes[0] must not be empty'],
    [{ matches: [{ edges: ['x'.repeat(257)] }] }, 'field matches[0].edges[0] must be at most 256 characters long'],
    [{ matches: [{ nodes: [5] }] }, 'field matches[0].nodes[0] must be a string'],
    [{ matches: Array.from({ length: 1001 }, () => ({ nodes: ['1'] })) }, 'field matches must have at most 1000 items'],
    [{ matches: [{ nodes: Array.from({ length: 6000 }, (_, i) => `n${i}`), edges: Array.from({ length: 5000 }, (_, i) => `e${i}`) }] }, 'matches[0] has 11000 node and edge IDs; a target has at most 10000'],
    [{}, 'field matches is required'],
  ] as [{ matches?: unknown[] }, string][])('refuses a matches call that breaks a rule, and changes nothing: %#', async (body, message) => {
    const before = (await analyst.get(`/api/b4675b85/alerts/${alertId}/cases`)).body;
    const response = await t.admin.post(`/api/admin/b4675b85/alerts/${alertId}/matches`, {
      ...body,
      // A valid match before the bad one must not be recorded either.
      ...(body.matches ? { matches: [{ nodes: ['fresh-node'] }, ...body.matches] } : {}),
    });
    expect(response.status).toBe(400);
    expect(response.body.key).toBe('invalid_parameter');
    expect(response.body.message.replace(/matches\[(\d+)\]/, (_: string, i: string) => `matches[${Number(i) - 1}]`)).toBe(message);
    expect((await analyst.get(`/api/b4675b85/alerts/${alertId}/cases`)).body).toEqual(before);
  });

  it('answers matches for an unknown alert with 404 and an unknown source with dataSource_unavailable', async () => {
    expect((await t.admin.post('/api/admin/b4675b85/alerts/99999/matches', { matches: [{ nodes: ['1'] }] })).status).toBe(404);
    expect((await t.admin.post('/api/admin/nosuch/alerts/1/matches', { matches: [{ nodes: ['1'] }] })).body.key).toBe('dataSource_unavailable');
    // Reporting matches is the runner's job: Admin only.
    expect((await analyst.post(`/api/admin/b4675b85/alerts/${alertId}/matches`, { matches: [{ nodes: ['1'] }] })).status).toBe(403);
  });

  it('serves concurrent calls that share targets in opposite orders (a deadlock is retried)', async () => {
    const alert = await createAlert(t.admin, 'b4675b85', { title: 'Concurrent' });
    const targets = Array.from({ length: 50 }, (_, i) => ({ nodes: [`c${i}`] }));
    await reportMatches(t.admin, 'b4675b85', alert.id, targets);
    const calls = Array.from({ length: 6 }, (_, i) => (i % 2 ? [...targets].reverse() : targets));
    const answers = await Promise.all(calls.map((matches) => t.admin.post(`/api/admin/b4675b85/alerts/${alert.id}/matches`, { matches })));
    for (const answer of answers) expect(answer.status).toBe(200);
    const { rows } = await t.db.query<{ total: number }>('SELECT sum(match_count) AS total FROM cases WHERE alert_id = $1', [alert.id]);
    expect(rows[0]!.total).toBe(50 * 7);
  });

  it('lists cases newest first with counts, paging and a status filter', async () => {
    const alert = await createAlert(t.admin, 'b4675b85', { title: 'Listing' });
    const cases = await reportMatches(t.admin, 'b4675b85', alert.id, [{ nodes: ['a'] }, { nodes: ['b'] }, { nodes: ['c'] }]);
    await analyst.post(`/api/b4675b85/alerts/${alert.id}/cases/${cases[0]!.id}/action`, { action: 'confirm' });
    const all = (await analyst.get(`/api/b4675b85/alerts/${alert.id}/cases`)).body;
    expect(all.counts).toEqual({ unconfirmed: 2, confirmed: 1, dismissed: 0, 'in-progress': 0 });
    expect(all.cases.map((c: { id: number }) => c.id)).toEqual([cases[2]!.id, cases[1]!.id, cases[0]!.id]);
    const page = (await analyst.get(`/api/b4675b85/alerts/${alert.id}/cases?offset=1&limit=1`)).body;
    expect(page.cases.map((c: { id: number }) => c.id)).toEqual([cases[1]!.id]);
    expect(page.counts).toEqual(all.counts);
    const confirmed = (await analyst.get(`/api/b4675b85/alerts/${alert.id}/cases?status=confirmed`)).body;
    expect(confirmed.cases.map((c: { id: number }) => c.id)).toEqual([cases[0]!.id]);
    expect(confirmed.cases[0].user).toMatchObject({ username: 'ana' });
    const bad = await analyst.get(`/api/b4675b85/alerts/${alert.id}/cases?limit=1001`);
    expect(bad.body).toEqual({ key: 'invalid_parameter', message: 'query parameter limit must be <= 1000', field: 'limit' });
    const badStatus = await analyst.get(`/api/b4675b85/alerts/${alert.id}/cases?status=open`);
    expect(badStatus.body.message).toBe('query parameter status must be one of "unconfirmed", "confirmed", "dismissed", "in-progress"');
  });

  it('deletes an alert with its cases', async () => {
    const alert = await createAlert(t.admin, 'b4675b85', { title: 'Doomed' });
    const [kase] = await reportMatches(t.admin, 'b4675b85', alert.id, [{ nodes: ['z'] }]);
    expect((await t.admin.delete(`/api/admin/b4675b85/alerts/${alert.id}`)).status).toBe(204);
    expect((await analyst.get(`/api/b4675b85/alerts/${alert.id}`)).status).toBe(404);
    const { rows } = await t.db.query('SELECT id FROM cases WHERE id = $1', [kase!.id]);
    expect(rows).toEqual([]);
    // Its matches too (a trigger per DELETE, not a foreign key checked per inserted match).
    const { rows: matches } = await t.db.query('SELECT hash FROM alert_matches WHERE alert_id = $1', [alert.id]);
    expect(matches).toEqual([]);
  });
});
