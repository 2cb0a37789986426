import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../cli/cli-support.js';
import { SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { ApiClient, useTestService } from '../support/test-service.js';

const SCHEMA = [
  'CREATE NODE TABLE Client(id STRING, name STRING, PRIMARY KEY(id))',
  'CREATE NODE TABLE Phone(number STRING, PRIMARY KEY(number))',
  'CREATE REL TABLE HAS_PHONE(FROM Client TO Phone)',
];

describe('data sources with a graph, and LKE\'s graph routes', () => {
  const t = useTestService();

  it('creates a source with an embedded graph, and an Admin writes to it through run/query', async () => {
    const created = await t.admin.post('/api/admin/sources', { key: 'fraud', name: 'Fraud', graph: { vendor: 'embedded' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ key: 'fraud', name: 'Fraud', propertyKeyAccessRights: false, graph: { vendor: 'embedded', allowWrites: true } });
    for (const query of [...SCHEMA, "CREATE (:Client {id: 'alice', name: 'Alice'})-[:HAS_PHONE]->(:Phone {number: '555'})<-[:HAS_PHONE]-(:Client {id: 'bob', name: 'Bob'})"]) {
      const answer = await t.admin.post('/api/fraud/graph/run/query', { query, dialect: 'cypher' });
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    expect((await t.admin.get('/api/admin/sources/fraud')).body).toEqual(created.body);
    expect((await t.admin.get('/api/admin/sources')).body.items).toContainEqual(created.body);
  });

  it('answers a read query to any signed-in user in LKE\'s shapes, each item once', async () => {
    const analyst = await t.userClient('graph-analyst');
    const answer = await analyst.post('/api/fraud/graph/run/query', { query: 'MATCH p = (a:Client)-[:HAS_PHONE]->(ph:Phone)<-[:HAS_PHONE]-(b:Client) WHERE a.id < b.id RETURN p, a' });
    expect(answer.status).toBe(200);
    expect(answer.body.truncatedByLimit).toBe(false);
    expect(answer.body.truncatedByAccess).toBe(false);
    expect(answer.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['Client:alice', 'Client:bob', 'Phone:555']);
    expect(answer.body.edges.map((e: { id: string }) => e.id).sort()).toEqual(['HAS_PHONE:Client:alice->Phone:555', 'HAS_PHONE:Client:bob->Phone:555']);
    expect(answer.body.nodes.find((n: { id: string }) => n.id === 'Client:alice')).toMatchObject({ data: { categories: ['Client'], properties: { id: 'alice', name: 'Alice' } } });
    const limited = await analyst.post('/api/fraud/graph/run/query', { query: 'MATCH (c:Client) RETURN c', limit: 1 });
    expect(limited.body).toMatchObject({ truncatedByLimit: true });
    expect(limited.body.nodes).toHaveLength(1);
  });

  it('refuses a write to a non-Admin, and to an Admin where the graph does not allow writes, changing nothing', async () => {
    const analyst = await t.userClient('graph-writer');
    const write = { query: "CREATE (:Client {id: 'mallory'})" };
    const refused = await analyst.post('/api/fraud/graph/run/query', write);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ key: 'forbidden', message: expect.stringMatching(/only Admins/) });
    expect((await t.admin.patch('/api/admin/sources/fraud', { graph: { vendor: 'embedded', allowWrites: false } })).body.graph).toEqual({ vendor: 'embedded', allowWrites: false });
    const adminRefused = await t.admin.post('/api/fraud/graph/run/query', write);
    expect(adminRefused.status).toBe(403);
    expect(adminRefused.body.message).toMatch(/does not allow writes/);
    const count = await t.admin.post('/api/fraud/graph/run/query', { query: "MATCH (c:Client {id: 'mallory'}) RETURN c" });
    expect(count.body.nodes).toEqual([]);
  });

  it('gets nodes and edges by id, 404 for an id of nothing', async () => {
    const analyst = await t.userClient('graph-reader');
    expect((await analyst.get('/api/fraud/graph/nodes/Client:alice')).body).toMatchObject({ id: 'Client:alice', data: { categories: ['Client'] } });
    const edge = await analyst.get(`/api/fraud/graph/edges/${encodeURIComponent('HAS_PHONE:Client:bob->Phone:555')}`);
    expect(edge.body).toMatchObject({ source: 'Client:bob', target: 'Phone:555', data: { type: 'HAS_PHONE' } });
    const missing = await analyst.get('/api/fraud/graph/nodes/Client:nobody');
    expect(missing.status).toBe(404);
    expect(missing.body.key).toBe('not_found');
  });

  it('keeps every query inside the graph: no file read or written, not by an Admin\'s write query either', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'outside-'));
    try {
      const secret = path.join(folder, 'secret.txt');
      writeFileSync(secret, 'the-secret-line\n');
      const analyst = await t.userClient('graph-reader-of-files');
      const read = await analyst.post('/api/fraud/graph/alertPreview', {
        query: `LOAD FROM '${secret}' (file_format='csv', header=false) RETURN column0 AS line`, columns: [{ type: 'string', columnName: 'line', columnTitle: 'line' }],
      });
      expect(read.status).toBe(400);
      // Refused by the plan (a file read: READ_CSV) or, before it, by the operating system as Kùzu binds the file.
      expect(read.body).toMatchObject({ key: 'bad_graph_request', field: 'query', message: expect.stringMatching(/LOAD FROM/) });
      expect(JSON.stringify(read.body)).not.toMatch(/the-secret-line|secret\.txt/);
      // A file the engine may read, its graph's own (relative to its folder): refused without a line of it.
      const own = await analyst.post('/api/fraud/graph/run/query', { query: `LOAD FROM 'graph' (file_format='csv', header=false) RETURN *` });
      expect(own.status).toBe(400);
      expect(own.body).toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/LOAD FROM/) });
      expect(JSON.stringify(own.body)).not.toMatch(/KUZU|line 1/);
      const hidden = await analyst.post('/api/fraud/graph/run/query', { query: `MATCH (c:Client) WITH c /* a comment */ LOAD\nFROM '${secret}' (file_format='csv') RETURN c` });
      expect(hidden.status).toBe(400);
      // The table function behind LOAD FROM, called by itself (it crashed Kùzu's process).
      expect((await analyst.post('/api/fraud/graph/run/query', { query: `CALL READ_CSV_SERIAL('${secret}') RETURN *` })).body).toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/READ_CSV_SERIAL/) });
      expect((await analyst.post('/api/fraud/graph/run/query', { query: `COPY (MATCH (c:Client) RETURN c.id) TO '${path.join(folder, 'analyst.csv')}'` })).status).toBe(400);
      await t.admin.patch('/api/admin/sources/fraud', { graph: { vendor: 'embedded', allowWrites: true } });
      for (const query of [`COPY (MATCH (c:Client) RETURN c.id) TO '${path.join(folder, 'admin.csv')}'`, `EXPORT DATABASE '${path.join(folder, 'export')}'`, `COPY Client FROM '${secret}'`, 'INSTALL httpfs']) {
        const answer = await t.admin.post('/api/fraud/graph/run/query', { query });
        expect(answer.status, query).toBe(400);
        expect(answer.body.key).toBe('bad_graph_request');
      }
      expect(['analyst.csv', 'admin.csv', 'export'].filter((name) => existsSync(path.join(folder, name)))).toEqual([]);
      // A keyword inside a string, a property or a label is data, not a clause.
      const data = await analyst.post('/api/fraud/graph/alertPreview', { query: "MATCH (c:Client) WHERE c.name <> 'LOAD FROM x' RETURN c.id AS id, 'COPY' AS copy", columns: [{ type: 'string', columnName: 'id', columnTitle: 'id' }] });
      expect(data.status).toBe(200);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('lets one user run at most 4 graph queries at once, previews counted, and another user is not held up by them', async () => {
    const busy = await t.userClient('graph-busy');
    // Streamed cross products that Kùzu stops at their 1.5 s time-out: five at once, whichever comes last is refused.
    const slow = { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 1500 };
    const other = await t.userClient('graph-other');
    const [answers, otherAnswer] = await Promise.all([
      Promise.all([...[1, 2, 3, 4].map(() => busy.post('/api/fraud/graph/run/query', slow)), busy.post('/api/fraud/graph/alertPreview', slow)]),
      other.post('/api/fraud/graph/run/query', { query: 'RETURN 1 AS one' }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([429, 504, 504, 504, 504]);
    expect(answers.find((r) => r.status === 429)!.body).toEqual({ key: 'too_many_requests', message: 'you already have 4 graph queries running (at most 4 at once): wait for one to end' });
    expect(otherAnswer.status).toBe(200);
    expect((await busy.post('/api/fraud/graph/run/query', { query: 'RETURN 1 AS one' })).status).toBe(200);
  });

  it('counts a node\'s or an edge\'s lookup among the user\'s graph queries', async () => {
    const busy = await t.userClient('graph-lookups');
    const slow = { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 1500 };
    const running = [1, 2, 3, 4].map(() => busy.post('/api/fraud/graph/run/query', slow));
    // The four hold their slots within milliseconds of arriving; they run for 1.5 s.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lookup = await busy.get('/api/fraud/graph/nodes/Client:alice');
    expect(lookup.body).toEqual({ key: 'too_many_requests', message: 'you already have 4 graph queries running (at most 4 at once): wait for one to end' });
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([504, 504, 504, 504]);
    expect((await busy.get('/api/fraud/graph/nodes/Client:alice')).status).toBe(200);
  });

  it('counts an API key\'s queries as the key\'s, whichever users it names', async () => {
    const apiKey = (await t.admin.post('/api/admin/applications', { name: 'graph-key', groups: [2] })).body.apiKey as string;
    const emails = await Promise.all(['key-user-1', 'key-user-2', 'key-user-3', 'key-user-4', 'key-user-5'].map(async (name) => {
      await t.userClient(name);
      return `${name}@example.com`;
    }));
    const asUser = (email: string) => new ApiClient(t.app, { authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` });
    const slow = { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 1500 };
    const answers = await Promise.all(emails.map((email) => asUser(email).post('/api/fraud/graph/run/query', slow)));
    expect(answers.map((r) => r.status).sort()).toEqual([429, 504, 504, 504, 504]);
    expect(answers.find((r) => r.status === 429)!.body.message).toMatch(/^this API key already has 4 graph queries running/);
  });

  it('answers bad queries, time-outs and sources without a graph with their keys', async () => {
    const syntax = await t.admin.post('/api/fraud/graph/run/query', { query: 'MATCH (c RETURN c' });
    expect(syntax.status).toBe(400);
    expect(syntax.body).toMatchObject({ key: 'bad_graph_request', field: 'query' });
    const slow = await t.admin.post('/api/fraud/graph/run/query', { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 200 });
    expect(slow.status).toBe(504);
    expect(slow.body.key).toBe('graph_request_timeout');
    expect((await t.admin.post('/api/fraud/graph/run/query', { query: 'MATCH (c:Client) RETURN count(c) AS n' })).status).toBe(200);
    await t.admin.post('/api/admin/sources', { key: 'plain', name: 'No graph' });
    const none = await t.admin.post('/api/plain/graph/run/query', { query: 'RETURN 1' });
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/has no graph/);
    const unknown = await t.admin.post('/api/nope/graph/run/query', { query: 'RETURN 1' });
    expect(unknown.body.key).toBe('dataSource_unavailable');
    const dialect = await t.admin.post('/api/fraud/graph/run/query', { query: 'RETURN 1', dialect: 'gremlin' });
    expect(dialect.status).toBe(400);
    expect(dialect.body.message).toMatch(/dialect/);
  });

  it('refuses a query past the bounds of its text before the engine sees it: 400 naming the bound and the field', async () => {
    const nest = `RETURN ${'('.repeat(5_000)}1${')'.repeat(5_000)} AS x`;
    const analyst = await t.userClient('graph-nester');
    const run = await analyst.post('/api/fraud/graph/run/query', { query: nest });
    expect(run.status).toBe(400);
    expect(run.body).toMatchObject({ key: 'bad_graph_request', field: 'query', message: expect.stringMatching(/^the query is nested 5,000 deep, over the 32 a query may nest/) });
    const preview = await analyst.post('/api/fraud/graph/alertPreview', { query: `RETURN ${Array(47_000).fill('1').join('+')} AS n` });
    expect(preview.body).toMatchObject({ key: 'bad_graph_request', field: 'query', message: expect.stringMatching(/^the query holds about 94,002 tokens/) });
    const alert = await t.admin.post('/api/admin/fraud/alerts', { title: 'Deep', queries: [{ name: 'ok', query: 'MATCH (c:Client) RETURN c' }, { name: 'deep', query: nest }] });
    expect(alert.status).toBe(400);
    expect(alert.body).toMatchObject({ key: 'constraint_violation', field: 'queries[1].query', message: expect.stringMatching(/^queries\[1\] \("deep"\): the query is nested 5,000 deep/) });
    expect((await analyst.post('/api/fraud/graph/run/query', { query: 'RETURN 1 AS one' })).status).toBe(200);
  });

  it('refuses a Neo4j graph it cannot reach, saying so, and stores nothing; never answers a password', async () => {
    const port = await freePort();
    const answer = await t.admin.post('/api/admin/sources', {
      key: 'remote',
      name: 'Remote',
      graph: { vendor: 'neo4j', url: `bolt://127.0.0.1:${port}`, user: 'neo4j', password: 'hunter2-secret' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.key).toBe('dataSource_unavailable');
    expect(answer.body.message).toMatch(/unreachable/);
    expect(JSON.stringify(answer.body)).not.toContain('hunter2-secret');
    expect((await t.admin.get('/api/admin/sources/remote')).status).toBe(404);
    for (const [graph, rule] of [
      [{ vendor: 'neo4j', url: 'http://127.0.0.1:7687', user: 'neo4j', password: 'x' }, /graph.url must use one of bolt/],
      [{ vendor: 'neo4j', url: 'bolt://neo4j:pw@127.0.0.1:7687', user: 'neo4j', password: 'x' }, /must not carry a user or password/],
      [{ vendor: 'neo4j', url: 'bolt://127.0.0.1:7687', user: 'neo4j' }, /graph.password is required/],
      [{ vendor: 'neo4j', url: 'bolt://127.0.0.1:7687', user: 'neo4j', password: 'x', database: 'bad name' }, /graph.database/],
      [{ vendor: 'embedded', url: 'bolt://127.0.0.1:7687' }, /graph.url is only for vendor "neo4j"/],
      [{ vendor: 'oracle' }, /vendor/],
    ] as const) {
      const refused = await t.admin.post('/api/admin/sources', { key: 'bad-graph', name: 'Bad', graph });
      expect(refused.status, JSON.stringify(graph)).toBe(400);
      expect(refused.body.message, JSON.stringify(graph)).toMatch(rule);
    }
  });

  it('reports each graph in readiness and metrics, and lets go of a deleted source\'s graph', async () => {
    const ready = await t.anonymous.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.graphs).toEqual([{ sourceKey: 'fraud', vendor: 'embedded', up: true, latencyMs: expect.any(Number) }]);
    // Anyone may ask readiness: within a second, or while a check runs, callers share one check of the graphs.
    const checks = await Promise.all([t.service.graphs.health(t.db, 2_000), t.service.graphs.health(t.db, 2_000)]);
    expect(checks[1]).toBe(checks[0]);
    const metrics = await t.admin.get('/metrics');
    expect(String(metrics.body)).toMatch(/^graph_up\{source="fraud"\} 1$/m);
    expect(String(metrics.body)).toMatch(/graph_query_duration_seconds_count\{source="fraud",outcome="ok"\} \d+/);
    const analyst = await t.userClient('graph-lister');
    expect((await analyst.get('/api/dataSources')).body).toContainEqual({ key: 'fraud', name: 'Fraud', connected: true });
    expect((await t.admin.delete('/api/admin/sources/fraud')).status).toBe(204);
    expect(t.service.graphs.opened().map((g) => g.sourceKey)).not.toContain('fraud');
    expect((await t.admin.post('/api/fraud/graph/run/query', { query: 'RETURN 1' })).body.key).toBe('dataSource_unavailable');
  });
});
