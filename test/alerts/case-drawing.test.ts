import { beforeAll, describe, expect, it } from 'vitest';
import { SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { useTestService, type ApiClient } from '../support/test-service.js';

// A case page draws its target a page at a time, in the caller's graph query slots, cached per case until the case
// has a new match (issue 44, item 12).
describe('the drawing of a case page: paged, counted in the query slots, cached per case', () => {
  const t = useTestService();
  let alertId: number;
  let casePath: string;

  async function write(...queries: string[]): Promise<void> {
    for (const query of queries) {
      const answer = await t.admin.post('/api/big/graph/run/query', { query });
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
  }
  const runNow = async () => expect((await t.admin.post(`/api/admin/big/alerts/${alertId}/run`, { waitForRun: true })).body).toEqual({ alreadyRunning: false });

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'big', name: 'Big', graph: { vendor: 'embedded' } })).status).toBe(201);
    expect((await t.admin.post('/api/admin/sources', { key: 'probe', name: 'Probe', graph: { vendor: 'embedded' } })).status).toBe(201);
    // Opened now: a probe (waitForFullSlots) must hold its slot for a moment only.
    expect((await t.admin.get('/api/probe/graph/nodes/Dot:1')).status).toBe(404);
    await write(
      'CREATE NODE TABLE Dot(id INT64, name STRING, PRIMARY KEY(id))',
      'CREATE NODE TABLE Tag(id STRING, PRIMARY KEY(id))',
      "UNWIND range(1, 450) AS i CREATE (:Dot {id: i, name: 'before'})",
      "CREATE (:Tag {id: 't1'})",
    );
    // One case (its target: every dot), a match per tag: a new tag is a new match on the same case.
    const created = await t.admin.post('/api/admin/big/alerts', { title: 'Every dot', target: 'dots', queries: [{ name: 'dots', query: 'MATCH (d:Dot) WITH collect(d) AS dots MATCH (t:Tag) RETURN dots, t' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    alertId = created.body.id;
    await runNow();
    const cases = (await t.admin.get(`/api/big/alerts/${alertId}/cases`)).body.cases;
    expect(cases).toHaveLength(1);
    casePath = `/api/big/alerts/${alertId}/cases/${cases[0].id}`;
  });

  it('draws a bounded first page and says where the next starts', async () => {
    const first = await t.admin.get(casePath);
    expect(first.status, JSON.stringify(first.body).slice(0, 500)).toBe(200);
    expect(first.body.nodes).toHaveLength(450);
    expect(first.body.graph.nodes).toHaveLength(200);
    expect(first.body.graph.nodes[0].id).toBe(first.body.nodes[0]);
    expect(first.body.graphPage).toEqual({ offset: 0, limit: 200, total: 450, nextOffset: 200 });
    const last = await t.admin.get(`${casePath}?graphOffset=400&graphLimit=100`);
    expect(last.body.graph.nodes.map((n: { id: string }) => n.id)).toEqual(first.body.nodes.slice(400));
    expect(last.body.graphPage).toEqual({ offset: 400, limit: 100, total: 450, nextOffset: null });
    expect((await t.admin.get(`${casePath}?graphLimit=1001`)).status).toBe(400);
  });

  it('answers a page again from its cache until the case has a new match', async () => {
    const name = async () => (await t.admin.get(casePath)).body.graph.nodes[0].data.properties.name;
    expect(await name()).toBe('before');
    await write("MATCH (d:Dot) SET d.name = 'after'");
    // Cached: the page is not fetched again (within CACHE_TTL_MS).
    expect(await name()).toBe('before');
    await write("CREATE (:Tag {id: 't2'})");
    await runNow();
    expect((await t.admin.get(casePath)).body.matchCount).toBe(2);
    expect(await name()).toBe('after');
  });

  it("takes one of the caller's query slots: a page not cached is 429 while all four are taken, a cached one answers", async () => {
    const analyst = await t.userClient('case-reader');
    expect((await analyst.get(casePath)).status).toBe(200);
    const slow = { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 3000 };
    // A slow query refused because a probe held a slot at that moment is sent again: four end up running.
    const slowQuery = (): Promise<unknown> => analyst.post('/api/big/graph/run/query', slow).then((r) => (r.status === 429 ? slowQuery() : r));
    const busy = [1, 2, 3, 4].map(slowQuery);
    try {
      await waitForFullSlots(analyst);
      const uncached = await analyst.get(`${casePath}?graphOffset=200`);
      expect(uncached.status).toBe(429);
      expect(uncached.body).toEqual({ key: 'too_many_requests', message: 'you already have 4 graph queries running (at most 4 at once): wait for one to end' });
      expect((await analyst.get(casePath)).status).toBe(200);
      // Another user's slots are their own.
      expect((await t.admin.get(`${casePath}?graphOffset=250`)).status).toBe(200);
    } finally {
      await Promise.all(busy);
    }
    expect((await analyst.get(`${casePath}?graphOffset=200`)).status).toBe(200);
  });
});

/**
 * Waits until `client` has its four slots taken: a lookup is refused. On a graph of its own, where no query waits: on
 * the busy graph, a lookup admitted before the slots filled waited its turn behind the slow queries.
 */
async function waitForFullSlots(client: ApiClient): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const probe = await client.get('/api/probe/graph/nodes/Dot:1');
    if (probe.status === 429) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the slow queries did not take the four slots');
}
