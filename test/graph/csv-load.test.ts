import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCsv } from '../../src/graph/embedded/csv-load.js';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';
import { allRows } from '../../src/graph/graph-source.js';
import { removeDir } from '../support/databases.js';

describe('loading the embedded graph from CSV files', () => {
  let dir: string;
  let graph: EmbeddedGraph;
  const file = (name: string, text: string) => {
    const at = path.join(dir, name);
    writeFileSync(at, text);
    return at;
  };
  const count = async (query: string) => (await allRows(await graph.run(query, { timeoutMs: 10_000, maxRows: 10, readOnly: true })))[0]!.n;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'aw-csv-'));
    // Its files are beside the graph's folder, which is all the graph's process may read otherwise (confinement.ts).
    graph = new EmbeddedGraph({ folder: path.join(dir, 'graph'), bufferPoolBytes: 64 << 20, label: 'data source "csv"', readablePaths: [dir] });
  });
  afterAll(async () => {
    await graph?.close();
    removeDir(dir);
  });

  it('makes the tables from the headers and copies every file, counting rows', async () => {
    const clients = file('clients.csv', 'id,name,score:DOUBLE\nalice,Alice,0.5\nbob,Bob,1.5\ncarol,Carol,2\n');
    const phones = file('phones.csv', 'number\n555-0100\n555-0101\n');
    const has = file('has.csv', 'from:Client,to:Phone,since:INT64\nalice,555-0100,2019\nbob,555-0100,2021\ncarol,555-0101,2022\n');
    const result = await loadCsv(graph, [{ table: 'Client', file: clients }, { table: 'Phone', file: phones }], [{ table: 'HAS_PHONE', file: has }]);
    expect(result.tables).toEqual([
      { table: 'Client', kind: 'nodes', rows: 3 },
      { table: 'Phone', kind: 'nodes', rows: 2 },
      { table: 'HAS_PHONE', kind: 'edges', rows: 3 },
    ]);
    expect(await count("MATCH (c:Client)-[h:HAS_PHONE]->(p:Phone {number: '555-0100'}) WHERE h.since > 2020 AND c.score > 1.0 RETURN count(*) AS n")).toBe(1);
  });

  it('adds to existing tables on a second load', async () => {
    const more = file('more.csv', 'id,name,score:DOUBLE\ndave,Dave,3\n');
    await loadCsv(graph, [{ table: 'Client', file: more }], []);
    expect(await count('MATCH (c:Client) RETURN count(c) AS n')).toBe(4);
  });

  it('refuses a bad file naming file, line and column, and loads nothing of the whole call', async () => {
    const good = file('good.csv', 'id,name,score:DOUBLE\neve,Eve,1\n');
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ['a value of the wrong type', () => loadCsv(graph, [{ table: 'Client', file: good }, { table: 'Client', file: file('bad-type.csv', 'id,name,score:DOUBLE\nfrank,Frank,1\ngina,Gina,lots\n') }], []), /bad-type\.csv line 3, column 3 \("score:DOUBLE"\): .*lots.*Nothing was loaded/],
      ['a row with too many values', () => loadCsv(graph, [{ table: 'Client', file: good }, { table: 'Client', file: file('wide.csv', 'id,name,score:DOUBLE\nhal,Hal,1,extra\n') }], []), /wide\.csv line 2: .*Nothing was loaded/],
      ['an edge to a node that does not exist', () => loadCsv(graph, [{ table: 'Client', file: good }], [{ table: 'HAS_PHONE', file: file('dangling.csv', 'from:Client,to:Phone,since:INT64\nalice,555-0101,2020\nalice,555-9999,2020\n') }]), /dangling\.csv line 3, column 2 \("to:Phone"\): no node has the key "555-9999"/],
      ['a key given twice', () => loadCsv(graph, [{ table: 'Client', file: file('twice.csv', 'id,name,score:DOUBLE\nivan,Ivan,1\nivan,Ivan again,2\n') }], []), /twice\.csv line 3, column 1 \("id"\): the key "ivan" is there twice/],
      ['an unknown type', () => loadCsv(graph, [{ table: 'Thing', file: file('typed.csv', 'id,size:HUGE\nx,1\n') }], []), /typed\.csv line 1, column 2 \("size"\): type HUGE/],
      ['an edge file without labels on its ends', () => loadCsv(graph, [], [{ table: 'KNOWS', file: file('untyped.csv', 'from,to\nalice,bob\n') }]), /untyped\.csv line 1, column 1 \("from"\): type it with the label/],
      ['an empty file', () => loadCsv(graph, [{ table: 'Empty', file: file('empty.csv', '') }], []), /empty\.csv: the file is empty/],
    ];
    for (const [what, load, message] of cases) {
      const err = await load().catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(Error);
      expect((err as Error).message, `${what}: ${(err as Error).message}`).toMatch(message);
    }
    expect(await count('MATCH (c:Client) RETURN count(c) AS n')).toBe(4);
    expect(await count("MATCH (c:Client {id: 'eve'}) RETURN count(c) AS n")).toBe(0);
    expect(await count('CALL show_tables() WHERE name IN ["Thing", "KNOWS", "Empty"] RETURN count(*) AS n')).toBe(0);
  });
});
