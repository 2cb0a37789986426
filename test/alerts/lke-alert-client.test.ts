import type { AddressInfo } from 'node:net';
import { AlertColumnType, GraphQueryDialect, RestClient, SharingMode } from '@linkurious/rest-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestService, type TestService } from '../support/test-service.js';

/** Linkurious Enterprise's own client, unchanged, writing and running a Cypher alert over HTTP. */
describe('@linkurious/rest-client\'s alert API against the service', () => {
  let t: TestService;
  let client: RestClient;

  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new RestClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    expect((await t.admin.post('/api/admin/sources', { key: 'lke', name: 'LKE', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of [
      'CREATE NODE TABLE Account(id STRING, PRIMARY KEY(id))',
      'CREATE REL TABLE TRANSFER(FROM Account TO Account, id STRING, amount DOUBLE)',
      "CREATE (:Account {id: 'a1'})-[:TRANSFER {id: 't1', amount: 9500.0}]->(:Account {id: 'a2'})",
    ]) {
      expect((await t.admin.post('/api/lke/graph/run/query', { query })).status).toBe(200);
    }
  });
  afterAll(async () => t?.close());

  it('creates, previews, runs and reads an alert and its case', async () => {
    expect((await client.auth.login({ usernameOrEmail: 'admin', password: ADMIN_PASSWORD })).isSuccess()).toBe(true);
    const query = 'MATCH (a:Account)-[t:TRANSFER]->(b:Account) WHERE t.amount > 9000 RETURN a, t, b, t.amount AS amount';
    const columns = [{ type: AlertColumnType.NUMBER, columnTitle: 'Amount', columnName: 'amount' }];
    const preview = await client.alert.alertPreview({ sourceKey: 'lke', query, dialect: GraphQueryDialect.CYPHER, columns, limit: 10 });
    expect(preview.isSuccess(), JSON.stringify(preview.body)).toBe(true);
    expect(preview.body).toEqual([expect.objectContaining({ columns: [9500] })]);

    const created = await client.alert.createAlert({ sourceKey: 'lke', title: 'Large transfers', enabled: true, sharing: SharingMode.SOURCE, folder: -1, columns, cron: '0 * * * *', queries: [{ name: 'large', query, dialect: GraphQueryDialect.CYPHER }], target: 't' });
    expect(created.isSuccess(), JSON.stringify(created.body)).toBe(true);
    const alert = created.body as { id: number; nextRun: string };
    expect(alert.nextRun).toEqual(expect.any(String));

    const run = await client.alert.runAlert({ sourceKey: 'lke', id: alert.id, waitForRun: true });
    expect(run.isSuccess(), JSON.stringify(run.body)).toBe(true);
    expect(run.body).toEqual({ alreadyRunning: false });

    const got = await client.alert.getAlert({ sourceKey: 'lke', id: alert.id });
    expect(got.body).toMatchObject({ status: 'idle', lastRunProblem: [], lastRun: expect.any(String) });

    const cases = await client.alert.getCases({ sourceKey: 'lke', alertId: alert.id });
    expect(cases.isSuccess(), JSON.stringify(cases.body)).toBe(true);
    const [kase] = (cases.body as { cases: { id: number; edges: string[] }[] }).cases;
    expect(kase!.edges).toEqual(['TRANSFER:t1']);
    const one = await client.alert.getCase({ sourceKey: 'lke', alertId: alert.id, caseId: kase!.id });
    expect(one.isSuccess(), JSON.stringify(one.body)).toBe(true);
    expect(one.body).toMatchObject({ graph: { edges: [expect.objectContaining({ id: 'TRANSFER:t1', source: 'Account:a1', target: 'Account:a2' })] } });
  });
});
