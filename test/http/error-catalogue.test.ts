import { describe, expect, it } from 'vitest';
import { ANSWERED_AS, ERROR_STATUS, type ErrorKey } from '../../src/errors.js';
import { freePort } from '../cli/cli-support.js';
import { createAlert, createSource, createWebhook, reportMatches, SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { type ApiAnswer, useTestService } from '../support/test-service.js';

/**
 * Every key of the catalogue is one a caller can meet: each is reached here through a real route, answered with its
 * catalogue status and a message. A key no route can answer any more, or answered at another status, fails this.
 * (`bug` is reached by the unexpected-error test in errors.test.ts, `database_unavailable` by database-outage.test.ts:
 * no route of a working service with its database answers them.) The keys the code raises under a name of its own
 * are answered as LKE's key for the case (ANSWERED_AS), never as theirs.
 */
describe('the error catalogue, as routes answer it', () => {
  const t = useTestService();
  const seen = new Map<string, number>();


  function expectError(answer: ApiAnswer, key: ErrorKey): void {
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ key });
    expect(typeof answer.body.message).toBe('string');
    expect(answer.body.message.length).toBeGreaterThan(0);
    seen.set(key, answer.status);
  }

  it('answers each key through some route, at its catalogue status', async () => {
    const analyst = await t.userClient('catalogue-analyst');
    await createSource(t.admin, 'catalogue');
    const alert = await createAlert(t.admin, 'catalogue');
    const [kase] = await reportMatches(t.admin, 'catalogue', alert.id, [{ nodes: ['n1'] }]);
    const casePath = `/api/catalogue/alerts/${alert.id}/cases/${kase!.id}`;

    expectError(await t.admin.post('/api/admin/webhooks', { url: 'not a url', secret: 'a-long-enough-secret' }), 'invalid_parameter');
    expectError(await t.admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:9/', secret: 'a-long-enough-secret', events: [{ eventType: 'newCase', sourceKey: 'nope' }] }), 'dataSource_unavailable');
    expectError(await t.anonymous.get('/api/auth/me'), 'unauthorized');
    expectError(await analyst.get('/api/admin/users'), 'forbidden');
    expectError(await t.admin.get('/api/admin/webhooks/999999/deliveries'), 'not_found');
    expectError(await t.admin.get('/api/no/such/route'), 'api_not_found');
    expectError(await t.admin.post('/api/admin/sources', { key: 'catalogue', name: 'Again' }), 'already_exists');
    const group = await t.admin.post('/api/admin/catalogue/groups', { name: 'Catalogue team' });
    const propertyRight = { targetType: 'nodePropertyKey', targetItemType: 'Account', targetName: 'iban', type: 'none' };
    expectError(await t.admin.request('PUT', `/api/admin/catalogue/groups/${group.body.id}/access_rights`, { accessRights: [propertyRight] }), 'property_key_access_rights_required');
    expect((await analyst.post(`${casePath}/action`, { action: 'confirm' })).status).toBe(204);
    expectError(await analyst.post(`${casePath}/action`, { action: 'confirm' }), 'redundant_action');
    expectError(await t.admin.request('POST', '/api/admin/sources', JSON.stringify({ key: 'big', name: 'x'.repeat(2 * 1024 * 1024) }), { 'content-type': 'application/json' }), 'payload_too_large');
    // Failed sign-ins on one account: past the free ones, the next must wait.
    let throttled: ApiAnswer | undefined;
    for (let i = 0; i < 20 && !throttled; i++) {
      const answer = await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'catalogue-analyst', password: `wrong-${i}` });
      if (answer.status !== 401) throttled = answer;
    }
    expectError(throttled!, 'too_many_requests');

    const webhook = await createWebhook(t.admin);
    expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false })).status).toBe(204);
    expectError(await t.admin.get(`/api/admin/webhooks/${webhook.id}/deliveries`), 'feature_disabled');
    expect((await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true })).status).toBe(204);

    // The graph's keys, on a source with an embedded graph.
    expect((await t.admin.post('/api/admin/sources', { key: 'graphs', name: 'Graph', graph: { vendor: 'embedded' } })).status).toBe(201);
    expect((await t.admin.post('/api/graphs/graph/run/query', { query: 'CREATE NODE TABLE N(id STRING, PRIMARY KEY(id))' })).status).toBe(200);
    expectError(await t.admin.post('/api/graphs/graph/run/query', { query: 'MATCH (n RETURN n' }), 'bad_graph_request');
    // A write refused (write_forbidden in the code), a bad alert query or target, a graph that does not answer: LKE's keys.
    expectError(await analyst.post('/api/graphs/graph/run/query', { query: "CREATE (:N {id: 'x'})" }), 'forbidden');
    const slow = `${SLOW_CROSS_PRODUCT} RETURN count(*) AS n`;
    expectError(await t.admin.post('/api/graphs/graph/run/query', { query: slow, timeout: 100 }), 'graph_request_timeout');
    expectError(await t.admin.post('/api/admin/graphs/alerts', { title: 'x', queries: [{ name: 'q', query: 'MATCH (n RETURN n' }] }), 'constraint_violation');
    expectError(await t.admin.post('/api/admin/graphs/alerts', { title: 'x', queries: [{ name: 'q', query: 'MATCH (n:N) RETURN n' }], target: 'm' }), 'constraint_violation');
    const unreachable = { vendor: 'neo4j', url: `bolt://127.0.0.1:${await freePort()}`, user: 'neo4j', password: 'x' };
    expectError(await t.admin.post('/api/admin/sources', { key: 'away', name: 'Away', graph: unreachable }), 'dataSource_unavailable');

    const reachable = Object.fromEntries(Object.entries(ERROR_STATUS).filter(([key]) => key !== 'bug' && key !== 'database_unavailable' && !(key in ANSWERED_AS)));
    expect(Object.fromEntries(seen)).toEqual(reachable);
    // A key answered as another has that one's status.
    for (const [raised, answered] of Object.entries(ANSWERED_AS)) expect(ERROR_STATUS[raised as ErrorKey], raised).toBe(ERROR_STATUS[answered]);
  });
});
