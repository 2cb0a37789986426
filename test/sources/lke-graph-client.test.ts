import type { AddressInfo } from 'node:net';
import { AlertQueryUpdateOperation, GraphQueryDialect, RestClient, SharingMode } from '@linkurious/rest-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../cli/cli-support.js';
import { ADMIN_PASSWORD, startTestService, type TestService } from '../support/test-service.js';

/**
 * Linkurious Enterprise's own client, unchanged, on the graph and alert routes: what it sends is served, and every
 * refusal is one it answers as an error (`isSuccess() === false`, a key and a message it reads), never one it throws
 * on. It throws on a key its method does not list, and on any status from 500.
 */
describe('@linkurious/rest-client on the graph and alert routes: answers and refusals', () => {
  let t: TestService;
  let baseUrl: string;
  let admin: RestClient;
  let analyst: RestClient;
  const cypher = GraphQueryDialect.CYPHER;

  /** What the client answered, once sure it answered (a throw fails here, naming the call). */
  async function refused(what: string, call: () => Promise<{ isSuccess(): boolean; status: number; body: unknown }>) {
    const answer = await call().catch((err: unknown) => {
      throw new Error(`${what}: the client threw: ${String(err)}`);
    });
    expect(answer.isSuccess(), `${what}: ${JSON.stringify(answer.body)}`).toBe(false);
    const body = answer.body as { key: string; message: string; field?: string };
    expect(body.message.length, what).toBeGreaterThan(0);
    return { status: answer.status, ...body };
  }

  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    expect((await t.admin.post('/api/admin/sources', { key: 'lke', name: 'LKE', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of [
      'CREATE NODE TABLE Account(id STRING, PRIMARY KEY(id))',
      'CREATE REL TABLE TRANSFER(FROM Account TO Account, id STRING, amount DOUBLE)',
      "CREATE (:Account {id: 'a1'})-[:TRANSFER {id: 't1', amount: 9500.0}]->(:Account {id: 'a2'})",
    ]) {
      expect((await t.admin.post('/api/lke/graph/run/query', { query })).status).toBe(200);
    }
    // A Bolt source nothing answers for: stored directly, as creating it through the API checks the connection.
    const graph = { vendor: 'neo4j', url: `bolt://127.0.0.1:${await freePort()}`, user: 'neo4j', allowWrites: false };
    await t.db.query("INSERT INTO data_sources (key, name, graph) VALUES ('away', 'Away', $1)", [JSON.stringify(graph)]);
    await t.userClient('lke-analyst');
    admin = new RestClient({ baseUrl });
    analyst = new RestClient({ baseUrl });
    expect((await admin.auth.login({ usernameOrEmail: 'admin', password: ADMIN_PASSWORD })).isSuccess()).toBe(true);
    expect((await analyst.auth.login({ usernameOrEmail: 'lke-analyst', password: 'lke-analyst-password' })).isSuccess()).toBe(true);
  });
  afterAll(async () => t?.close());

  it('getNode and getEdge (a POST) answer a subgraph: the node; the edge with its two ends', async () => {
    const node = await analyst.graphNode.getNode({ sourceKey: 'lke', id: 'Account:a1', withDigest: true, withDegree: true, edgesTo: [] });
    expect(node.isSuccess(), JSON.stringify(node.body)).toBe(true);
    expect(node.body).toEqual({ nodes: [{ id: 'Account:a1', data: expect.objectContaining({ categories: ['Account'], properties: { id: 'a1' } }) }], edges: [] });

    const edge = await analyst.graphEdge.getEdge({ sourceKey: 'lke', id: 'TRANSFER:t1' });
    expect(edge.isSuccess(), JSON.stringify(edge.body)).toBe(true);
    const subgraph = edge.body as unknown as { nodes: { id: string }[]; edges: { id: string; data: { source: string; target: string } }[] };
    expect(subgraph.edges).toEqual([expect.objectContaining({ id: 'TRANSFER:t1', data: expect.objectContaining({ source: 'Account:a1', target: 'Account:a2' }) })]);
    expect(subgraph.nodes.map((n) => n.id).sort()).toEqual(['Account:a1', 'Account:a2']);

    // The GETs answer the item alone, as before.
    expect((await t.admin.get('/api/lke/graph/nodes/Account:a1')).body).toMatchObject({ id: 'Account:a1' });
  });

  it('refuses a lookup as the client reads it: not found, no session, a source that is not there', async () => {
    expect(await refused('unknown node', () => analyst.graphNode.getNode({ sourceKey: 'lke', id: 'Account:nope' }))).toMatchObject({ status: 404, key: 'not_found', message: 'node Account:nope was not found' });
    expect(await refused('unknown edge', () => analyst.graphEdge.getEdge({ sourceKey: 'lke', id: 'TRANSFER:nope' }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('no session', () => new RestClient({ baseUrl }).graphNode.getNode({ sourceKey: 'lke', id: 'Account:a1' }))).toMatchObject({ status: 401, key: 'unauthorized' });
    expect(await refused('unknown source', () => analyst.graphNode.getNode({ sourceKey: 'nosuch', id: 'x' }))).toMatchObject({ key: 'dataSource_unavailable' });
  });

  it('refuses queries as the client reads them: a bad query, a write', async () => {
    expect(await refused('bad query', () => analyst.graphQuery.runQuery({ sourceKey: 'lke', query: 'MATCH (n RETURN n', dialect: cypher }))).toMatchObject({ status: 400, key: 'bad_graph_request', field: 'query' });
    expect(await refused('a write by an analyst', () => analyst.graphQuery.runQuery({ sourceKey: 'lke', query: "CREATE (:Account {id: 'x'})", dialect: cypher }))).toMatchObject({ status: 403, key: 'forbidden', field: 'query', message: expect.stringMatching(/only Admins may run write queries/) });
    expect(await refused('preview of a bad query', () => analyst.alert.alertPreview({ sourceKey: 'lke', query: 'MATCH (n RETURN n', dialect: cypher }))).toMatchObject({ status: 400, key: 'bad_graph_request' });
    expect(await refused('preview of a target not returned', () => analyst.alert.alertPreview({ sourceKey: 'lke', query: 'MATCH (a:Account) RETURN a', dialect: cypher, target: 'b' } as never))).toMatchObject({ status: 400, key: 'constraint_violation', field: 'target' });
  });

  // The Bolt driver gives up on a graph nobody answers for after its retries (about 30 s). Every graph route answers
  // it the same way (the error handler, errors.ts ANSWERED_AS): one is asked.
  it('refuses a lookup on a graph that does not answer: dataSource_unavailable, not a 503 it throws on', async () => {
    const lookup = await refused('graph away', () => analyst.graphEdge.getEdge({ sourceKey: 'away', id: 'x' }));
    expect(lookup).toMatchObject({ status: 400, key: 'dataSource_unavailable', message: expect.stringMatching(/unreachable/) });
  }, 90_000);

  it('refuses alerts as the client reads them: a bad query or target, not Admin, unknown, nothing to run', async () => {
    const alert = (queries: { name: string; query: string }[], target?: string) => ({
      sourceKey: 'lke', title: 'Refused', enabled: true, sharing: SharingMode.SOURCE, folder: -1, cron: '0 * * * *', columns: [],
      queries: queries.map((q) => ({ ...q, dialect: cypher })), ...(target ? { target } : {}),
    });
    const good = [{ name: 'transfers', query: 'MATCH (a:Account)-[t:TRANSFER]->(b:Account) RETURN a, t, b' }];
    expect(await refused('bad query', () => admin.alert.createAlert(alert([{ name: 'q', query: 'MATCH (a RETURN a' }])))).toMatchObject({ status: 400, key: 'constraint_violation', field: 'queries[0].query', message: expect.stringMatching(/^queries\[0\] \("q"\)/) });
    expect(await refused('a writing query', () => admin.alert.createAlert(alert([{ name: 'w', query: "CREATE (:Account {id: 'w'})" }])))).toMatchObject({ key: 'constraint_violation', field: 'queries[0].query', message: expect.stringMatching(/may only read/) });
    expect(await refused('bad target', () => admin.alert.createAlert(alert(good, 'nope')))).toMatchObject({ key: 'constraint_violation', field: 'target' });
    expect(await refused('not Admin', () => analyst.alert.createAlert(alert(good)))).toMatchObject({ status: 403, key: 'forbidden' });
    expect(await refused('unknown source', () => admin.alert.createAlert({ ...alert(good), sourceKey: 'nosuch' }))).toMatchObject({ key: 'dataSource_unavailable' });

    const created = await admin.alert.createAlert(alert(good));
    expect(created.isSuccess(), JSON.stringify(created.body)).toBe(true);
    const id = (created.body as { id: number }).id;
    expect(await refused('bad query in a change', () => admin.alert.updateAlert({ sourceKey: 'lke', id, queries: [{ operation: AlertQueryUpdateOperation.CREATE, name: 'r', query: 'MATCH (a RETURN a', dialect: cypher }] }))).toMatchObject({ key: 'constraint_violation', field: expect.stringMatching(/^queries\[\d+\]\.query$/) });
    expect(await refused('unknown alert', () => analyst.alert.getAlert({ sourceKey: 'lke', id: 999_999 }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('unknown alert to run', () => admin.alert.runAlert({ sourceKey: 'lke', id: 999_999 }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('unknown case', () => analyst.alert.getCase({ sourceKey: 'lke', alertId: id, caseId: 999_999 }))).toMatchObject({ status: 404, key: 'not_found' });

    // An alert whose matches are reported (no queries) has nothing to run.
    const reported = await t.admin.post('/api/admin/lke/alerts', { title: 'Reported' });
    expect(await refused('nothing to run', () => admin.alert.runAlert({ sourceKey: 'lke', id: reported.body.id }))).toMatchObject({ status: 400, key: 'constraint_violation', field: 'queries', message: expect.stringMatching(/has no queries to run/) });
  });
});
