import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOfRow } from '../../src/graph/row-identity.js';
import { loadCsv } from '../../src/graph/embedded/csv-load.js';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';
import { stringLiteral } from '../../src/graph/embedded/kuzu-catalogue.js';
import { allRows, type RunOptions } from '../../src/graph/graph-source.js';
import type { GraphEdge } from '../../src/graph/graph-schemas.js';
import { Subgraph } from '../../src/graph/items.js';
import { removeDir } from '../support/databases.js';

const READ: RunOptions = { timeoutMs: 10_000, maxRows: 100, readOnly: true };
// A ring a1 → a2 → a3 → a1 twice: PAID names its edges by an `id` property, SENT (no `id`) by their ends.
const RING = [
  'CREATE NODE TABLE Account(id STRING, PRIMARY KEY(id))',
  'CREATE REL TABLE PAID(FROM Account TO Account, id STRING)',
  'CREATE REL TABLE SENT(FROM Account TO Account)',
  "CREATE (:Account {id: 'a1'}), (:Account {id: 'a2'}), (:Account {id: 'a3'})",
  ...[['a1', 'a2'], ['a2', 'a3'], ['a3', 'a1']].flatMap(([s, d]) => [
    `MATCH (s:Account {id: '${s}'}), (d:Account {id: '${d}'}) CREATE (s)-[:PAID {id: 'p-${s}'}]->(d)`,
    `MATCH (s:Account {id: '${s}'}), (d:Account {id: '${d}'}) CREATE (s)-[:SENT]->(d)`,
  ]),
];
const STORED = {
  PAID: [['PAID:p-a1', 'Account:a1', 'Account:a2'], ['PAID:p-a2', 'Account:a2', 'Account:a3'], ['PAID:p-a3', 'Account:a3', 'Account:a1']],
  SENT: [
    ['SENT:Account:a1->Account:a2', 'Account:a1', 'Account:a2'],
    ['SENT:Account:a2->Account:a3', 'Account:a2', 'Account:a3'],
    ['SENT:Account:a3->Account:a1', 'Account:a3', 'Account:a1'],
  ],
};
/** The ring written as a recursive pattern closing on its start, as one whose ends are compared, as three hops, unwound. */
const ringsOf = (type: string) => [
  `MATCH p = (a:Account)-[:${type}*3..3]->(a) RETURN p`,
  `MATCH p = (a:Account)-[:${type}*3..3]->(b:Account) WHERE a.id = b.id RETURN p`,
  `MATCH (a:Account)-[r1:${type}]->(b:Account)-[r2:${type}]->(c:Account)-[r3:${type}]->(a) RETURN a, r1, b, r2, c, r3`,
  `MATCH p = (a:Account)-[:${type}*3..3]->(a) UNWIND rels(p) AS r RETURN nodes(p) AS ns, collect(r) AS rs`,
];
const ends = (edges: Iterable<GraphEdge>) => [...edges].map((e) => [e.id, e.source, e.target]).sort(([a], [b]) => (a! < b! ? -1 : 1));

describe('the embedded graph: a ring\'s edges as stored, table names its catalogue reads, any returned name', () => {
  let folder: string;
  let graph: EmbeddedGraph;
  const open = () => new EmbeddedGraph({ folder, bufferPoolBytes: 64 << 20, label: 'data source "rings"' });

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'aw-rings-'));
    // Kùzu itself, in a process of its own: the graph made with a table named as the catalogue cannot read (as
    // before the service refused such names), and Kùzu's own answer to the ring closing on its start, each
    // relationship's ends swapped (what the service undoes).
    const script = `
      import kuzu from 'kuzu';
      const database = new kuzu.Database(${JSON.stringify(path.join(folder, 'graph'))}, 64 << 20);
      const conn = new kuzu.Connection(database);
      for (const statement of ${JSON.stringify(['CREATE NODE TABLE `Old.x`(id STRING, PRIMARY KEY(id))', "CREATE (:`Old.x` {id: 'o1'})", ...RING])}) (await conn.query(statement)).close();
      const result = await conn.query('MATCH p = (a:Account)-[:SENT*3..3]->(a) RETURN p');
      const [{ p }] = await result.getAll();
      // Every result closed before the database is: Kùzu's process crashes at its exit otherwise.
      result.close();
      const idOf = (internal) => p._nodes.find((n) => n._id.offset === internal.offset).id;
      console.log(JSON.stringify(p._rels.map((r) => idOf(r._src) + '->' + idOf(r._dst)).sort()));
      await conn.close();
      await database.close();`;
    const swapped = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(swapped)).toEqual(['a1->a3', 'a2->a1', 'a3->a2']);
    graph = open();
  });
  afterAll(async () => {
    await graph?.close();
    removeDir(folder);
  });

  it('names and draws every edge of a ring as stored, however the ring is written: one match, found by its ids', async () => {
    for (const type of ['PAID', 'SENT'] as const) {
      const keys = new Set<string>();
      for (const query of ringsOf(type)) {
        const rows = await allRows(await graph.run(query, READ));
        expect(rows, query).toHaveLength(3);
        for (const row of rows) {
          const subgraph = new Subgraph();
          subgraph.addRow(row);
          expect(ends(subgraph.edges.values()), query).toEqual(STORED[type]);
          keys.add(keyOfRow(row));
        }
        // As an alert run reads them: the Kùzu process's keys, and the run/query answer's edges.
        const stream = await graph.run(query, { ...READ, properties: false });
        for await (const batch of stream.identified!(10)) for (const key of batch.keys) keys.add(key);
        await stream.close();
        const answer = await graph.subgraph(query, { ...READ, maxItems: 100 });
        expect(ends(JSON.parse(answer.edges.toString()) as GraphEdge[]), query).toEqual(STORED[type]);
      }
      expect(keys.size, type).toBe(1);
      for (const [id, source, target] of STORED[type]) expect(await graph.edge(id!), id).toMatchObject({ id, source, target });
    }
  });

  it('opens a graph holding a table its catalogue cannot read, and fails a query meeting one of its items, naming the table', async () => {
    const met = await allRows(await graph.run('MATCH (n:`Old.x`) RETURN n', READ)).catch((err: unknown) => err);
    expect(met).toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/^the table "Old\.x" cannot be read by Kùzu's catalogue \(table_info: No database named Old\).*ALTER TABLE `Old\.x` RENAME TO `Old_x`/) });
    await expect(graph.subgraph('MATCH (n:`Old.x`) RETURN n', { ...READ, maxItems: 10 })).rejects.toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/"Old\.x"/) });
    // A load that makes one is refused, naming it, and changes nothing; a name with quotes and backslashes is read.
    const loaded = await graph.load(['CREATE NODE TABLE `New.y`(id STRING, PRIMARY KEY(id))', "CREATE (:Account {id: 'a9'})"], 10_000).catch((err: unknown) => err);
    expect(loaded).toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/^the table "New\.y" was not created: /) });
    expect(await allRows(await graph.run("MATCH (n:Account {id: 'a9'}) RETURN n", READ))).toEqual([]);
    // `graph load` refuses it before reading its file.
    await expect(loadCsv(graph, [{ table: 'R.x', file: path.join(folder, 'none.csv') }], [])).rejects.toThrow(/"R\.x" must be letters, digits and _/);
    const odd = 'it\'s "odd" \\ named';
    await graph.load([`CREATE NODE TABLE ${'`'}${odd}${'`'}(id STRING, PRIMARY KEY(id))`, `CREATE (:${'`'}${odd}${'`'} {id: 'q1'})`], 10_000);
    const [row] = await allRows(await graph.run(`MATCH (n:${'`'}${odd}${'`'}) RETURN n`, READ));
    expect((row!.n as { node: { id: string } }).node.id).toBe(`${encodeURIComponent(odd)}:q1`);
    expect(stringLiteral(odd)).toBe(`'it\\'s "odd" \\\\ named'`);
  });

  it('keeps a column, a property or a map key named `__proto__` as its own, through rows, maps and lookups', async () => {
    await graph.load(['CREATE NODE TABLE Proto(id STRING, `__proto__` STRING, `constructor` STRING, PRIMARY KEY(id))', "CREATE (:Proto {id: 'x', `__proto__`: 'p', `constructor`: 'c'})"], 10_000);
    const [row] = await allRows(await graph.run("MATCH (n:Proto) RETURN 1 AS __proto__, n AS constructor, {`__proto__`: 2} AS m", READ));
    expect(Object.keys(row!)).toEqual(['__proto__', 'constructor', 'm']);
    expect(row!['__proto__']).toBe(1);
    expect(Object.entries((row!['constructor'] as unknown as { node: { data: { properties: object } } }).node.data.properties)).toEqual([['id', 'x'], ['__proto__', 'p'], ['constructor', 'c']]);
    expect(Object.entries(row!.m as object)).toEqual([['__proto__', 2]]);
    expect(Object.entries((await graph.node('Proto:x'))!.data.properties)).toEqual([['id', 'x'], ['__proto__', 'p'], ['constructor', 'c']]);
  });
});
