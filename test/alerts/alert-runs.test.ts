import { beforeAll, describe, expect, it } from 'vitest';
import { claimAlert, runClaimedAlert } from '../../src/alerts/alert-run.js';
import { AlertScheduler } from '../../src/alerts/alert-scheduler.js';
import { RecordedMatches } from '../../src/alerts/recorded-matches.js';
import { createWebhook, SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { waitUntil } from '../support/processes.js';
import { freePort } from '../cli/cli-support.js';
import { useTestService, type ApiClient } from '../support/test-service.js';

const SHARED_PHONE = 'MATCH (a:Client)-[:HAS_PHONE]->(p:Phone)<-[:HAS_PHONE]-(b:Client) WHERE a.id < b.id RETURN a, b, p, p.number AS phone';

async function write(admin: ApiClient, ...queries: string[]): Promise<void> {
  for (const query of queries) {
    const answer = await admin.post('/api/fraud/graph/run/query', { query });
    expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
  }
}

describe('alerts that run: Cypher on the graph, matches into cases, events without repeats', () => {
  // A CRON of every second below: the least interval between runs (ALERTS_MIN_INTERVAL_MS) lowered to allow it.
  const t = useTestService({ env: { ALERTS_MIN_INTERVAL_MS: '1000' } });
  let webhook: number;
  let alertId: number;

  /** The event types of the deliveries the webhook has, oldest first. */
  async function events(): Promise<string[]> {
    const { rows } = await t.db.query<{ payload: string }>(
      'SELECT e.payload FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.webhook_id = $1 ORDER BY d.id',
      [webhook],
    );
    return rows.map((r) => JSON.parse(r.payload).eventType);
  }
  const runNow = async (id = alertId) => {
    const answer = await t.admin.post(`/api/admin/fraud/alerts/${id}/run`, { waitForRun: true });
    expect(answer.body, JSON.stringify(answer.body)).toEqual({ alreadyRunning: false });
    return (await t.admin.get(`/api/fraud/alerts/${id}`)).body;
  };

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'fraud', name: 'Fraud', graph: { vendor: 'embedded' } })).status).toBe(201);
    await write(
      t.admin,
      'CREATE NODE TABLE Client(id STRING, name STRING, PRIMARY KEY(id))',
      'CREATE NODE TABLE Phone(number STRING, PRIMARY KEY(number))',
      'CREATE REL TABLE HAS_PHONE(FROM Client TO Phone)',
      "CREATE (:Client {id: 'alice'})-[:HAS_PHONE]->(:Phone {number: '555'})<-[:HAS_PHONE]-(:Client {id: 'bob'})",
      "CREATE (:Client {id: 'dan'})-[:HAS_PHONE]->(:Phone {number: '777'})",
    );
    webhook = (await createWebhook(t.admin, { events: [{ eventType: 'newCase' }, { eventType: 'newMatch' }] })).id;
  });

  it('creates an alert with LKE\'s fields: queries, CRON, columns and target', async () => {
    const created = await t.admin.post('/api/admin/fraud/alerts', {
      title: 'Shared phone numbers',
      enabled: true,
      cron: '0 3 * * *',
      columns: [{ type: 'string', columnTitle: 'Phone', columnName: 'phone' }],
      queries: [{ name: 'shared phone', query: SHARED_PHONE, dialect: 'cypher' }],
      target: 'p',
      folder: -1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    alertId = created.body.id;
    expect(created.body).toMatchObject({
      cron: '0 3 * * *',
      target: 'p',
      columns: [{ type: 'string', columnTitle: 'Phone', columnName: 'phone' }],
      queries: [{ id: expect.any(Number), name: 'shared phone', query: SHARED_PHONE, dialect: 'cypher', description: '' }],
      maxMatches: 5000,
      timeoutMs: 600000,
      status: 'idle',
      lastRun: null,
      lastRunProblem: [],
      runs: [],
    });
    expect(new Date(created.body.nextRun).getUTCHours()).toBe(3);
  });

  it('refuses bad queries, targets and CRONs before saving anything', async () => {
    // `field` names what the error is about, as the request spells it, so a form shows it beside that field.
    const bad = async (body: Record<string, unknown>, key: string, message: RegExp, field: string) => {
      const answer = await t.admin.post('/api/admin/fraud/alerts', { title: 'Bad', cron: '* * * * *', queries: [{ name: 'q', query: SHARED_PHONE }], ...body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.key).toBe(key);
      expect(answer.body.message).toMatch(message);
      expect(answer.body.field).toBe(field);
    };
    await bad({ queries: [{ name: 'q', query: SHARED_PHONE }, { name: 'r', query: 'MATCH (a:Client RETURN a' }] }, 'constraint_violation', /queries\[1\] \("r"\)/, 'queries[1].query');
    await bad({ queries: [{ name: 'q', query: "CREATE (:Client {id: 'x'})" }] }, 'constraint_violation', /may only read/, 'queries[0].query');
    // A first row over the size a row may hold: the query's fault too, said as such.
    await bad({ queries: [{ name: 'q', query: "MATCH (c:Client) RETURN c, repeat('x', 17000000) AS s LIMIT 1" }] }, 'constraint_violation', /queries\[0\] \("q"\): row 1 of the answer holds about 16 MB, over the 16 MB/, 'queries[0].query');
    await bad({ queries: [{ name: ' ', query: SHARED_PHONE }] }, 'invalid_parameter', /queries\[0\]\.name must be 1 to/, 'queries[0].name');
    await bad({ target: 'nope' }, 'constraint_violation', /target "nope" is not returned/, 'target');
    await bad({ target: 'phone' }, 'constraint_violation', /holds no node/, 'target');
    await bad({ columns: [{ type: 'number', columnTitle: 'X', columnName: 'x' }] }, 'invalid_parameter', /columns\[0\]\.columnName "x" is not returned/, 'columns[0].columnName');
    await bad({ cron: '0 0 31 2 *' }, 'invalid_parameter', /never fires/, 'cron');
    await bad({ maxMatches: 5001 }, 'invalid_parameter', /maxMatches must be an integer from 1 to 5000/, 'maxMatches');
    await bad({ title: '   ' }, 'invalid_parameter', /title must be 1 to/, 'title');
    expect((await t.admin.post('/api/admin/sources', { key: 'manual', name: 'Reported' })).status).toBe(201);
    const noGraph = await t.admin.post('/api/admin/manual/alerts', { title: 'x', queries: [{ name: 'q', query: 'RETURN 1' }] });
    expect(noGraph.status).toBe(400);
    expect(noGraph.body.message).toMatch(/has no graph/);
    expect((await t.anonymous.get('/api/fraud/alerts')).status).toBe(401);
    const items = (await t.admin.get('/api/fraud/alerts')).body.items;
    expect(items.map((a: { title: string }) => a.title)).toEqual(['Shared phone numbers']);
  });

  it('runs now: a new case per target, newCase once; a rerun over the same graph emits nothing', async () => {
    const first = await runNow();
    expect(first.runs[0]).toMatchObject({ trigger: 'manual', outcome: 'ok', rowsRead: 1, matchesNew: 1, matchesSeen: 0, casesOpened: 1, eventsEmitted: 1, problems: [] });
    expect(first.lastRun).not.toBeNull();
    expect(await events()).toEqual(['newCase']);
    const again = await runNow();
    expect(again.runs[0]).toMatchObject({ outcome: 'ok', rowsRead: 1, matchesNew: 0, matchesSeen: 1, casesOpened: 0, eventsEmitted: 0 });
    expect(await events()).toEqual(['newCase']);
    // The Kùzu process sent the rerun's row by its identity alone, never the row itself.
    const runs = t.service.alertRuns;
    const claimed = await claimAlert(t.db, runs.owner, alertId, runs.limits);
    // Nor did it ask the database: this process knew the match recorded (recorded-matches.ts).
    expect(await runClaimedAlert(runs, claimed!)).toMatchObject({ rowsRead: 1, matchesSeen: 1, matchesKnown: 1, rowsMoved: 0, events: 0 });
  });

  it('emits exactly the new matches when the graph grows, grouped by the target', async () => {
    await write(t.admin, "MATCH (p:Phone {number: '555'}) CREATE (:Client {id: 'carol'})-[:HAS_PHONE]->(p)");
    const run = await runNow();
    expect(run.runs[0]).toMatchObject({ rowsRead: 3, matchesNew: 2, matchesSeen: 1, casesOpened: 0, eventsEmitted: 2 });
    expect(await events()).toEqual(['newCase', 'newMatch', 'newMatch']);
    const cases = (await t.admin.get(`/api/fraud/alerts/${alertId}/cases`)).body.cases;
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ nodes: ['Phone:555'], edges: [], matchCount: 3 });
    const { rows } = await t.db.query<{ payload: string }>("SELECT payload FROM webhook_events WHERE payload LIKE '%newMatch%' ORDER BY id LIMIT 1");
    expect(JSON.parse(rows[0]!.payload).data.case.target).toEqual({ nodes: ['Phone:555'], edges: [] });
  });

  it('lists each alert with its last run and its cases in each status, and each case with its newest column values, for the console', async () => {
    const latest = (await t.admin.get(`/api/fraud/alerts/${alertId}/runs?limit=1`)).body.items;
    const listed = (await t.admin.get('/api/fraud/alerts')).body.items.find((a: { id: number }) => a.id === alertId);
    expect(listed.runs).toEqual(latest);
    expect(listed.caseCounts).toEqual({ unconfirmed: 1, confirmed: 0, dismissed: 0, 'in-progress': 0 });
    expect((await t.admin.get(`/api/fraud/alerts/${alertId}`)).body.caseCounts).toBeUndefined();
    const cases = (await t.admin.get(`/api/fraud/alerts/${alertId}/cases`)).body.cases;
    expect(cases.map((c: { columns: unknown }) => c.columns)).toEqual([{ phone: '555' }]);
  });

  it('shows a case with its target from the graph, and its matches with their column values', async () => {
    const [kase] = (await t.admin.get(`/api/fraud/alerts/${alertId}/cases`)).body.cases;
    const page = await t.admin.get(`/api/fraud/alerts/${alertId}/cases/${kase.id}`);
    expect(page.body.graph).toEqual({ nodes: [expect.objectContaining({ id: 'Phone:555', data: expect.objectContaining({ categories: ['Phone'] }) })], edges: [] });
    const matches = (await t.admin.get(`/api/fraud/alerts/${alertId}/cases/${kase.id}/matches`)).body.items;
    expect(matches).toHaveLength(3);
    expect(matches.map((m: { columns: unknown }) => m.columns)).toEqual([{ phone: '555' }, { phone: '555' }, { phone: '555' }]);
    expect(matches.map((m: { nodes: string[] }) => m.nodes.join(',')).sort()).toEqual([
      'Client:alice,Client:bob,Phone:555',
      'Client:alice,Client:carol,Phone:555',
      'Client:bob,Client:carol,Phone:555',
    ]);
  });

  it('keeps the cases when a query is edited, and runs several queries in one alert', async () => {
    const changed = await t.admin.patch(`/api/admin/fraud/alerts/${alertId}`, {
      queries: [
        { operation: 'update', id: (await t.admin.get(`/api/fraud/alerts/${alertId}`)).body.queries[0].id, query: `${SHARED_PHONE} ORDER BY phone` },
        { operation: 'create', name: 'lonely phone', query: 'MATCH (c:Client)-[:HAS_PHONE]->(p:Phone) WHERE NOT EXISTS { MATCH (p)<-[:HAS_PHONE]-(o:Client) WHERE o.id <> c.id } RETURN c, p, p.number AS phone' },
      ],
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.queries).toHaveLength(2);
    const run = await runNow();
    expect(run.runs[0]).toMatchObject({ outcome: 'ok', rowsRead: 4, matchesNew: 1, matchesSeen: 3, casesOpened: 1, eventsEmitted: 1 });
    expect(await events()).toEqual(['newCase', 'newMatch', 'newMatch', 'newCase']);
    expect((await t.admin.get(`/api/fraud/alerts/${alertId}/cases`)).body.cases).toHaveLength(2);
  });

  it('stops at maxMatches and says the run is partial, recording what it read', async () => {
    const capped = await t.admin.post('/api/admin/fraud/alerts', { title: 'Capped', queries: [{ name: 'all clients', query: 'MATCH (c:Client) RETURN c ORDER BY c.id' }], maxMatches: 2 });
    expect(capped.status, JSON.stringify(capped.body)).toBe(201);
    const run = await runNow(capped.body.id);
    expect(run.runs[0]).toMatchObject({ outcome: 'partial', rowsRead: 2, matchesNew: 2, casesOpened: 2 });
    expect(run.lastRunProblem).toEqual([{ source: 'alert', error: { key: 'max_matches_reached', message: expect.stringMatching(/after 2 rows \(maxMatches: every row read counts/) }, partial: true }]);
  });

  it('leaves out a row of more than 10,000 nodes and edges (the most a match holds), and says so on the run', async () => {
    await write(t.admin, 'CREATE NODE TABLE Dot(id INT64, PRIMARY KEY(id))', 'UNWIND range(1, 10001) AS i CREATE (:Dot {id: i})');
    const huge = await t.admin.post('/api/admin/fraud/alerts', {
      title: 'Huge',
      queries: [
        { name: 'all dots', query: 'MATCH (d:Dot) WITH collect(d) AS dots RETURN dots' },
        { name: 'dan', query: "MATCH (c:Client {id: 'dan'}) RETURN c" },
      ],
    });
    expect(huge.status, JSON.stringify(huge.body)).toBe(201);
    const run = await runNow(huge.body.id);
    expect(run.runs[0]).toMatchObject({ outcome: 'partial', rowsRead: 2, matchesNew: 1, casesOpened: 1 });
    expect(run.lastRunProblem).toEqual([
      { source: 'alertQuery', queryId: huge.body.queries[0].id, error: { key: 'match_too_large', message: '1 row was not recorded (the first: row 1): each holds more than 10000 nodes and edges, the most a match may hold' }, partial: true },
    ]);
  });

  it('reports a query that runs past its time-out as partial, with the engine stopped', async () => {
    const slow = await t.admin.post('/api/admin/fraud/alerts', {
      title: 'Slow',
      queries: [
        { name: 'clients', query: 'MATCH (c:Client) RETURN c' },
        { name: 'slow', query: `${SLOW_CROSS_PRODUCT} WITH count(*) AS n MATCH (c:Client) RETURN c, n` },
      ],
      timeoutMs: 1000,
    });
    expect(slow.status, JSON.stringify(slow.body)).toBe(201);
    const run = await runNow(slow.body.id);
    expect(run.runs[0]).toMatchObject({ outcome: 'partial', matchesNew: 4 });
    // Its duration is the whole run's, the time the engine took to give up included.
    expect(run.runs[0].durationMs).toBeGreaterThanOrEqual(1000);
    expect(run.lastRunProblem).toEqual([{ source: 'alertQuery', queryId: slow.body.queries[1].id, error: { key: 'graph_request_timeout', message: expect.any(String) }, partial: true }]);
  });

  it('gives a run\'s queries one time-out together: a query after one that took it all is not run', async () => {
    const slow = await t.admin.post('/api/admin/fraud/alerts', {
      title: 'Slow first',
      queries: [
        { name: 'slow', query: `${SLOW_CROSS_PRODUCT} WITH count(*) AS n MATCH (c:Client) RETURN c, n` },
        { name: 'clients', query: 'MATCH (c:Client) RETURN c' },
      ],
      timeoutMs: 1000,
    });
    expect(slow.status, JSON.stringify(slow.body)).toBe(201);
    const [first, second] = slow.body.queries.map((q: { id: number }) => q.id);
    const run = await runNow(slow.body.id);
    expect(run.runs[0]).toMatchObject({ outcome: 'partial', matchesNew: 0 });
    expect(run.lastRunProblem).toEqual([
      { source: 'alertQuery', queryId: first, error: { key: 'graph_request_timeout', message: expect.any(String) }, partial: true },
      { source: 'alertQuery', queryId: second, error: { key: 'graph_request_timeout', message: "not run: the queries before it took the run's time-out (timeoutMs, 1000 ms)" }, partial: true },
    ]);
  });

  it('runs an enabled alert at its CRON times, and a due time once however many processes look', async () => {
    const due = await t.admin.post('/api/admin/fraud/alerts', { title: 'Every second', cron: '* * * * * *', queries: [{ name: 'phones', query: 'MATCH (p:Phone) RETURN p' }] });
    expect(due.status, JSON.stringify(due.body)).toBe(201);
    const schedulers = [new AlertScheduler({ ...t.service.alertRuns, owner: 'process-a' }), new AlertScheduler({ ...t.service.alertRuns, owner: 'process-b' })];
    schedulers.forEach((s) => s.start());
    try {
      await waitUntil(async () => (await t.admin.get(`/api/fraud/alerts/${due.body.id}/runs`)).body.items.length >= 3, 'three scheduled runs', 20_000);
    } finally {
      await Promise.all(schedulers.map((s) => s.stop()));
    }
    const runs = (await t.admin.get(`/api/fraud/alerts/${due.body.id}/runs`)).body.items;
    expect(runs.every((r: { trigger: string }) => r.trigger === 'schedule')).toBe(true);
    // One run per due second: no two runs started within the same second.
    const seconds = runs.map((r: { startedAt: string }) => r.startedAt.slice(0, 19));
    expect(new Set(seconds).size).toBe(seconds.length);
    expect(runs.reduce((n: number, r: { casesOpened: number }) => n + r.casesOpened, 0)).toBe(2);
  });

  it('records a run once when a claim outlives its lease: the late process records nothing', async () => {
    const runs = t.service.alertRuns;
    const before = await events();
    const stale = await claimAlert(t.db, 'killed-process', alertId, runs.limits);
    expect(stale).toBeDefined();
    await t.db.query("UPDATE alerts SET run_locked_until = now() - interval '1 second' WHERE id = $1", [alertId]);
    await write(t.admin, "MATCH (p:Phone {number: '777'}) CREATE (:Client {id: 'erin'})-[:HAS_PHONE]->(p)");
    const taken = await claimAlert(t.db, 'other-process', alertId, runs.limits);
    expect(taken).toBeDefined();
    expect(await claimAlert(t.db, 'third-process', alertId, runs.limits)).toBeUndefined();
    const done = await runClaimedAlert({ ...runs, owner: 'other-process' }, taken!);
    // dan and erin now share 777, which dan alone had (the lonely-phone query opened its case): one new match.
    expect(done).toMatchObject({ matchesNew: 1, rowsMoved: 1, casesOpened: 0, events: 1 });
    expect(done.rowsRead).toBeGreaterThan(1);
    const late = await runClaimedAlert({ ...runs, owner: 'killed-process' }, stale!);
    expect(late).toMatchObject({ outcome: 'failed', matchesNew: 0, events: 0 });
    expect(await events()).toEqual([...before, 'newMatch']);
    expect((await t.admin.post(`/api/admin/fraud/alerts/${alertId}/run`, {})).body).toEqual({ alreadyRunning: false });
  });

  it('reports an unreachable graph on the alert and tries again later, sooner than its CRON, waiting longer each time', async () => {
    const port = await freePort();
    // A Bolt source nothing answers for: stored directly, as creating it through the API checks the connection.
    await t.db.query(`INSERT INTO data_sources (key, name, graph) VALUES ('away', 'Away', $1)`, [JSON.stringify({ vendor: 'neo4j', url: `bolt://127.0.0.1:${port}`, user: 'neo4j', allowWrites: false })]);
    const { rows } = await t.db.query<{ id: number }>("INSERT INTO alerts (source_key, title, cron, next_run_at) VALUES ('away', 'Away', '0 0 1 1 *', now()) RETURNING id");
    const id = rows[0]!.id;
    await t.db.query("INSERT INTO alert_queries (alert_id, name, query) VALUES ($1, 'q', 'MATCH (n) RETURN n')", [id]);
    const runs = t.service.alertRuns;
    const next = async () => (await t.admin.get(`/api/away/alerts/${id}`)).body;
    for (const wait of [30, 60]) {
      const before = Date.now();
      const claimed = await claimAlert(t.db, runs.owner, id, runs.limits);
      expect((await runClaimedAlert(runs, { ...claimed!, manual: false })).outcome).toBe('failed');
      const alert = await next();
      expect(alert.lastRunProblem).toEqual([{ source: 'alertQuery', queryId: expect.any(Number), error: { key: 'data_source_unavailable', message: expect.stringMatching(/unreachable/) }, partial: false }]);
      const retryIn = (new Date(alert.nextRun).getTime() - before) / 1000;
      expect(retryIn).toBeGreaterThan(wait - 5);
      expect(retryIn).toBeLessThan(wait + 30);
    }
  });

  it('previews what a query finds without recording anything', async () => {
    const analyst = await t.userClient('preview-analyst');
    const analystPreview = (body: object) => analyst.post('/api/fraud/graph/alertPreview', body);
    const before = await events();
    const preview = await t.admin.post('/api/fraud/graph/alertPreview', { query: SHARED_PHONE, columns: [{ type: 'string', columnTitle: 'Phone', columnName: 'phone' }], limit: 2, target: 'p' });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toHaveLength(2);
    expect(preview.body[0].columns).toEqual(['555']);
    expect(preview.body[0].nodes.map((n: { id: string }) => n.id).sort()).toEqual(expect.arrayContaining(['Phone:555']));
    expect(await events()).toEqual(before);
    const broken = await t.admin.post('/api/fraud/graph/alertPreview', { query: 'MATCH (a:Client RETURN a' });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ key: 'bad_graph_request', field: 'query' });
    const missing = await t.admin.post('/api/fraud/graph/alertPreview', { query: SHARED_PHONE, target: 'nope' });
    expect(missing.body).toMatchObject({ key: 'constraint_violation', field: 'target' });
    // Rows of a megabyte each: the answer stops past 8 MB, refused with the rule, not held whole.
    const large = await analystPreview({ query: "UNWIND range(1, 20) AS i RETURN i, repeat('x', 1000000) AS big", columns: [{ type: 'string', columnTitle: 'Big', columnName: 'big' }], limit: 20 });
    expect(large.status).toBe(400);
    expect(large.body).toEqual({ key: 'invalid_parameter', field: 'limit', message: "the preview's rows hold more than 8 MB (past row 8): ask for fewer rows (limit) or return smaller values" });
    expect((await analystPreview({ query: "UNWIND range(1, 7) AS i RETURN i, repeat('x', 1000000) AS big", columns: [{ type: 'string', columnTitle: 'Big', columnName: 'big' }], limit: 20 })).body).toHaveLength(7);
  });

  it('asks the database again about matches it knew recorded once any of them is deleted, however deleted', async () => {
    const created = await t.admin.post('/api/admin/fraud/alerts', { title: 'Every client', queries: [{ name: 'all', query: 'MATCH (c:Client) RETURN c' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: number = created.body.id;
    const runs = t.service.alertRuns;
    const run = async () => runClaimedAlert(runs, (await claimAlert(t.db, runs.owner, id, runs.limits))!);
    const clients = (await run()).matchesNew;
    expect(clients).toBeGreaterThan(1);
    expect(await run()).toMatchObject({ matchesNew: 0, matchesSeen: clients, matchesKnown: clients, events: 0 });
    // One match deleted behind the service's back: the alert's epoch moved, so nothing known is trusted, and the
    // match is found again (its case stayed: a newMatch).
    await t.db.query('DELETE FROM alert_matches WHERE alert_id = $1 AND hash = (SELECT min(hash) FROM alert_matches WHERE alert_id = $1)', [id]);
    const before = await events();
    expect(await run()).toMatchObject({ matchesNew: 1, matchesSeen: clients - 1, matchesKnown: 0, casesOpened: 0, events: 1 });
    expect(await events()).toEqual([...before, 'newMatch']);
    expect(await run()).toMatchObject({ matchesNew: 0, matchesKnown: clients, events: 0 });
    // A process that may know fewer keys than the alert has matches does not learn it (it would push every other
    // alert out, and know this one in part): it asks the database, and keeps what it knows of the others.
    const narrow = { ...runs, recorded: new RecordedMatches(clients - 1) };
    narrow.recorded.learn(0, '0', ['[["Client:other"],[]]']);
    for (let i = 0; i < 2; i++) {
      const claimed = await claimAlert(t.db, runs.owner, id, runs.limits);
      expect(await runClaimedAlert(narrow, claimed!)).toMatchObject({ matchesNew: 0, matchesSeen: clients, matchesKnown: 0, events: 0 });
    }
    expect(narrow.recorded.size).toBe(1);
    // TRUNCATE names no row: it moves every alert's epoch (undone here, with its transaction).
    const epochs = async (db: { query: typeof t.db.query }) =>
      (await db.query<{ id: number; matches_epoch: string }>('SELECT id, matches_epoch::text FROM alerts WHERE id = ANY($1::int[]) ORDER BY id', [[alertId, id]])).rows.map((r) => Number(r.matches_epoch));
    const [shared, every] = await epochs(t.db);
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query('TRUNCATE alert_matches');
        expect(await epochs(tx)).toEqual([shared! + 1, every! + 1]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await epochs(t.db)).toEqual([shared, every]);
  });

  it('knows a match of a long key by its hash, the identity it is recorded under', async () => {
    // One row: every client and every HAS_PHONE edge, a key of well over 128 characters.
    const query = 'MATCH (c:Client)-[h:HAS_PHONE]->(:Phone) WITH collect(c) AS clients, collect(h) AS phones RETURN clients, phones';
    const created = await t.admin.post('/api/admin/fraud/alerts', { title: 'Everyone at once', queries: [{ name: 'all', query }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runs = t.service.alertRuns;
    const run = async () => runClaimedAlert(runs, (await claimAlert(t.db, runs.owner, created.body.id, runs.limits))!);
    expect(await run()).toMatchObject({ outcome: 'ok', matchesNew: 1, rowsMoved: 1, events: 1 });
    expect(await run()).toMatchObject({ outcome: 'ok', matchesNew: 0, matchesSeen: 1, matchesKnown: 1, rowsMoved: 0, events: 0 });
  });

  it('counts matches, not rows: 2 matches found by 2,401 rows, over three batches and two queries, are 2', async () => {
    const created = await t.admin.post('/api/admin/fraud/alerts', {
      title: 'Phones again and again',
      queries: [
        { name: 'each phone 1,200 times', query: "MATCH (p:Phone) WHERE p.number IN ['555', '777'] UNWIND range(1, 1200) AS i RETURN p" },
        { name: 'one phone once more', query: "MATCH (p:Phone {number: '555'}) RETURN p" },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as number;
    const first = await runNow(id);
    expect(first.runs[0]).toMatchObject({ outcome: 'ok', rowsRead: 2401, matchesNew: 2, matchesSeen: 0, casesOpened: 2 });
    const again = await runNow(id);
    expect(again.runs[0]).toMatchObject({ outcome: 'ok', rowsRead: 2401, matchesNew: 0, matchesSeen: 2, casesOpened: 0, eventsEmitted: 0 });
    // Asked of the database, rather than known recorded by this process: the same counts.
    const runs = t.service.alertRuns;
    const claimed = await claimAlert(t.db, runs.owner, id, runs.limits);
    expect(await runClaimedAlert({ ...runs, recorded: new RecordedMatches(1) }, claimed!)).toMatchObject({ rowsRead: 2401, matchesNew: 0, matchesSeen: 2, matchesKnown: 0, events: 0 });
  });

  it('records a run that the database refuses as failed, keeping none of it, and frees the alert for its next run', async () => {
    const created = await t.admin.post('/api/admin/fraud/alerts', { title: 'Refused', queries: [{ name: 'clients', query: 'MATCH (c:Client) RETURN c' }], cron: '0 0 1 1 *', enabled: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as number;
    const before = await events();
    // The database itself refuses the run's matches, as it refuses a string holding U+0000 (which jsonb cannot hold).
    await t.db.query("CREATE FUNCTION refuse_test_matches() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
    await t.db.query(`CREATE TRIGGER refuse_test_matches BEFORE INSERT ON alert_matches FOR EACH ROW WHEN (NEW.alert_id = ${id}) EXECUTE FUNCTION refuse_test_matches()`);
    try {
      const failed = await runNow(id);
      expect(failed.runs[0]).toMatchObject({ outcome: 'failed', rowsRead: 0, matchesNew: 0, eventsEmitted: 0 });
      expect(failed.runs[0].problems).toEqual([{ source: 'alert', error: { key: 'alert_run_failed', message: expect.stringMatching(/^the run failed and recorded none of its matches: .*refused by the test/) }, partial: false }]);
      expect(failed.lastRunProblem).toEqual(failed.runs[0].problems);
      // Its lease is given back and its next CRON time set: not left to run again and fail at each lease's end.
      const { rows } = await t.db.query<{ run_owner: string | null; next_run_at: Date | null }>('SELECT run_owner, next_run_at FROM alerts WHERE id = $1', [id]);
      expect(rows[0]!.run_owner).toBeNull();
      expect(rows[0]!.next_run_at!.getTime()).toBeGreaterThan(Date.now());
      expect((await t.db.query('SELECT 1 FROM cases WHERE alert_id = $1', [id])).rows).toEqual([]);
      expect(await events()).toEqual(before);
    } finally {
      await t.db.query('DROP TRIGGER refuse_test_matches ON alert_matches');
      await t.db.query('DROP FUNCTION refuse_test_matches()');
    }
    const again = await runNow(id);
    expect(again.runs[0]).toMatchObject({ outcome: 'ok', problems: [] });
    expect(again.runs[0].matchesNew).toBeGreaterThan(0);
  });
});
