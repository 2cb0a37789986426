import { beforeAll, describe, expect, it } from 'vitest';
import { useTestService, type ApiClient } from '../support/test-service.js';

// One ring, a1 → a2 → a3 → a1, of an edge table without an `id` property: its edges are named by their ends.
const STORED = [
  { id: 'TRANSFER:Account:a1->Account:a2', source: 'Account:a1', target: 'Account:a2' },
  { id: 'TRANSFER:Account:a2->Account:a3', source: 'Account:a2', target: 'Account:a3' },
  { id: 'TRANSFER:Account:a3->Account:a1', source: 'Account:a3', target: 'Account:a1' },
];
// The ring written three ways. Kùzu 0.11.3 answers the first's relationships with their ends swapped.
const RINGS = [
  'MATCH p = (a:Account)-[:TRANSFER*3..3]->(a) RETURN p',
  'MATCH p = (a:Account)-[:TRANSFER*3..3]->(b:Account) WHERE a.id = b.id RETURN p',
  'MATCH (a:Account)-[r1:TRANSFER]->(b:Account)-[r2:TRANSFER]->(c:Account)-[r3:TRANSFER]->(a) RETURN a, r1, b, r2, c, r3',
];

interface Edge {
  id: string;
  source: string;
  target: string;
}
const ends = (edges: Edge[]) => edges.map(({ id, source, target }) => ({ id, source, target })).sort((x, y) => x.id.localeCompare(y.id));

async function write(admin: ApiClient, ...queries: string[]): Promise<void> {
  for (const query of queries) {
    const answer = await admin.post('/api/ring/graph/run/query', { query });
    expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
  }
}

describe('rings, table names and returned names: every edge as stored, every id of the data', () => {
  const t = useTestService();
  const runNow = async (id: number) => {
    expect((await t.admin.post(`/api/admin/ring/alerts/${id}/run`, { waitForRun: true })).body).toEqual({ alreadyRunning: false });
    return (await t.admin.get(`/api/ring/alerts/${id}`)).body;
  };

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'ring', name: 'Ring', graph: { vendor: 'embedded' } })).status).toBe(201);
    await write(
      t.admin,
      'CREATE NODE TABLE Account(id STRING, `__proto__` STRING, `constructor` STRING, PRIMARY KEY(id))',
      'CREATE REL TABLE TRANSFER(FROM Account TO Account, amount INT64)',
      "CREATE (:Account {id: 'a1', `__proto__`: 'p1', `constructor`: 'c1'}), (:Account {id: 'a2'}), (:Account {id: 'a3'})",
      ...[['a1', 'a2'], ['a2', 'a3'], ['a3', 'a1']].map(([s, d]) => `MATCH (s:Account {id: '${s}'}), (d:Account {id: '${d}'}) CREATE (s)-[:TRANSFER {amount: 1}]->(d)`),
    );
  });

  it('draws a ring\'s edges as stored however it is written (preview, run/query, lookup), and records it as one match', async () => {
    for (const query of RINGS) {
      const preview = await t.admin.post('/api/ring/graph/alertPreview', { query });
      expect(preview.status, query).toBe(200);
      // One row per rotation, each the whole ring.
      expect(preview.body, query).toHaveLength(3);
      for (const row of preview.body) expect(ends(row.edges), query).toEqual(STORED);
      expect(ends((await t.admin.post('/api/ring/graph/run/query', { query })).body.edges), query).toEqual(STORED);
    }
    for (const edge of STORED) {
      const found = await t.admin.get(`/api/ring/graph/edges/${encodeURIComponent(edge.id)}`);
      expect(found.status, edge.id).toBe(200);
      expect(found.body).toMatchObject(edge);
    }
    const alert = await t.admin.post('/api/admin/ring/alerts', { title: 'Rings', queries: RINGS.map((query, i) => ({ name: `ring ${i}`, query })) });
    expect(alert.status, JSON.stringify(alert.body)).toBe(201);
    expect((await runNow(alert.body.id)).runs[0]).toMatchObject({ outcome: 'ok', matchesNew: 1, casesOpened: 1 });
    const cases = (await t.admin.get(`/api/ring/alerts/${alert.body.id}/cases`)).body.cases;
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ nodes: ['Account:a1', 'Account:a2', 'Account:a3'], edges: STORED.map((e) => e.id) });
    const page = (await t.admin.get(`/api/ring/alerts/${alert.body.id}/cases/${cases[0].id}`)).body;
    expect(ends(page.graph.edges)).toEqual(STORED);
  });

  it('refuses a table the catalogue cannot read (a name with "."), naming it, and later tables get ids of their data', async () => {
    for (const [query, act] of [
      ['CREATE NODE TABLE `R.x`(id STRING, PRIMARY KEY(id))', 'created'],
      ['CREATE REL TABLE `T.y`(FROM Account TO Account)', 'created'],
      ['ALTER TABLE TRANSFER RENAME TO `T.z`', 'renamed'],
    ]) {
      const refused = await t.admin.post('/api/ring/graph/run/query', { query });
      expect(refused.status, query).toBe(400);
      expect(refused.body, query).toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(new RegExp(`^the table "[RT]\\.[xyz]" was not ${act}: `)) });
    }
    const tables = await t.admin.post('/api/ring/graph/alertPreview', { query: 'CALL show_tables() RETURN name', columns: [{ type: 'string', columnTitle: 'Name', columnName: 'name' }] });
    expect(tables.body.map((row: { columns: string[] }) => row.columns[0]).sort()).toEqual(['Account', 'TRANSFER']);
    await write(t.admin, 'CREATE NODE TABLE Later(id STRING, PRIMARY KEY(id))', "CREATE (:Later {id: 'l1'})");
    expect((await t.admin.post('/api/ring/graph/run/query', { query: 'MATCH (n:Later) RETURN n' })).body.nodes.map((n: { id: string }) => n.id)).toEqual(['Later:l1']);
    expect(ends((await t.admin.post('/api/ring/graph/run/query', { query: RINGS[2] })).body.edges)).toEqual(STORED);
  });

  it('keeps `__proto__` and `constructor` as names like any other: columns, properties, and an alert\'s target', async () => {
    const preview = await t.admin.post('/api/ring/graph/alertPreview', {
      query: 'RETURN 1 AS __proto__, 2 AS constructor',
      columns: [{ type: 'number', columnTitle: 'P', columnName: '__proto__' }, { type: 'number', columnTitle: 'C', columnName: 'constructor' }],
    });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.map((row: { columns: unknown[] }) => row.columns)).toEqual([[1, 2]]);
    // Compared as entries: a literal's `__proto__:` would set a prototype, and a prototype's key would not show.
    const properties = [['__proto__', 'p1'], ['constructor', 'c1'], ['id', 'a1']];
    const entries = (value: object) => Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    const node = await t.admin.get('/api/ring/graph/nodes/Account:a1');
    expect(entries(node.body.data.properties)).toEqual(properties);
    const answered = await t.admin.post('/api/ring/graph/run/query', { query: "MATCH (n:Account {id: 'a1'}) RETURN n AS __proto__" });
    expect(entries(answered.body.nodes[0].data.properties)).toEqual(properties);
    const alert = await t.admin.post('/api/admin/ring/alerts', {
      title: 'Prototype',
      queries: [{ name: 'by name', query: "MATCH (n:Account)-[:TRANSFER]->(m:Account) WHERE n.id = 'a1' RETURN n AS __proto__, m, n.`constructor` AS constructor" }],
      target: '__proto__',
      columns: [{ type: 'string', columnTitle: 'P', columnName: '__proto__' }, { type: 'string', columnTitle: 'C', columnName: 'constructor' }],
    });
    expect(alert.status, JSON.stringify(alert.body)).toBe(201);
    expect((await runNow(alert.body.id)).runs[0]).toMatchObject({ outcome: 'ok', problems: [], matchesNew: 1, casesOpened: 1 });
    // A rerun knows the match: its identity is the same on both sides.
    expect((await runNow(alert.body.id)).runs[0]).toMatchObject({ outcome: 'ok', problems: [], matchesNew: 0 });
    const [kase] = (await t.admin.get(`/api/ring/alerts/${alert.body.id}/cases`)).body.cases;
    expect(kase).toMatchObject({ nodes: ['Account:a1'], edges: [] });
    expect(entries(kase.columns)).toEqual([['__proto__', 'Account:a1'], ['constructor', 'c1']]);
    const matches = (await t.admin.get(`/api/ring/alerts/${alert.body.id}/cases/${kase.id}/matches`)).body.items;
    expect(matches.map((m: { columns: object }) => entries(m.columns))).toEqual([[['__proto__', 'Account:a1'], ['constructor', 'c1']]]);
  });
});
