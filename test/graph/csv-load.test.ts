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

  it('refuses a file whose header does not fit the table it goes into, naming the column, and loads nothing', async () => {
    // The tables as the earlier tests made them: Client(id, name, score DOUBLE), Phone(number), HAS_PHONE(Client → Phone, since INT64).
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      // The report: a wider file into a one-column table was "loaded", each whole line a key.
      ['a column the table lacks', () => loadCsv(graph, [{ table: 'Phone', file: file('phones-wide.csv', 'number,area\n555-0200,north\n555-0201,south\n') }], []), /phones-wide\.csv line 1, column 2 \("area"\): table Phone has no column 2: a file loaded into an existing table has its columns, in its order \(Phone: number STRING\)/],
      ['a column missing', () => loadCsv(graph, [{ table: 'Client', file: file('narrow.csv', 'id,name\nzed,Zed\n') }], []), /narrow\.csv line 1: column 3 \("score"\) is missing: .*\(Client: id STRING, name STRING, score DOUBLE\)/],
      ['a column of another name', () => loadCsv(graph, [{ table: 'Client', file: file('renamed.csv', 'id,label,score:DOUBLE\nzed,Zed,1\n') }], []), /renamed\.csv line 1, column 2 \("label"\): table Client's column 2 is "name"/],
      ['a column of another type', () => loadCsv(graph, [{ table: 'Client', file: file('retyped.csv', 'id,name,score:INT64\nzed,Zed,1\n') }], []), /retyped\.csv line 1, column 3 \("score:INT64"\): Client\.score is DOUBLE, not INT64/],
      ['edge ends the type does not connect', () => loadCsv(graph, [], [{ table: 'HAS_PHONE', file: file('reversed.csv', 'from:Phone,to:Client,since:INT64\n555-0100,alice,2020\n') }]), /reversed\.csv line 1, column 1 \("from:Phone"\): edge type HAS_PHONE goes from Client to Phone, not from Phone to Client/],
      ['nodes into an edge type', () => loadCsv(graph, [{ table: 'HAS_PHONE', file: file('nodes.csv', 'id\nx\n') }], []), /nodes\.csv: HAS_PHONE is an edge type of the graph already: load the file with --edges/],
      ['two files of one new table that differ', () => loadCsv(graph, [{ table: 'Town', file: file('towns.csv', 'name\nParis\n') }, { table: 'Town', file: file('towns-2.csv', 'name,size:INT64\nLyon,2\n') }], []), /towns-2\.csv line 1, column 2 \("size:INT64"\): table Town has no column 2/],
    ];
    for (const [what, load, message] of cases) {
      const err = await load().catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(Error);
      expect((err as Error).message, `${what}: ${(err as Error).message}`).toMatch(message);
    }
    expect(await count('MATCH (p:Phone) RETURN count(p) AS n')).toBe(2);
    expect(await count('MATCH (c:Client) RETURN count(c) AS n')).toBe(4);
    expect(await count('CALL show_tables() WHERE name = "Town" RETURN count(*) AS n')).toBe(0);
    // A file that fits (an untyped column takes the table's type) still loads.
    await loadCsv(graph, [{ table: 'Client', file: file('fits.csv', 'id,name,score\nzed,Zed,7.5\n') }], []);
    expect(await count("MATCH (c:Client {id: 'zed'}) WHERE c.score = 7.5 RETURN count(c) AS n")).toBe(1);
  });

  it('quotes at most a bounded part of a header, a value or a line in its errors', async () => {
    const long = 'x'.repeat(200_000);
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ['a first line with no line break', () => loadCsv(graph, [{ table: 'Blob', file: file('blob.csv', long) }], []), /blob\.csv line 1: no line break in its first 65,536 bytes/],
      ['a column name that is no name', () => loadCsv(graph, [{ table: 'Blob', file: file('wide-name.csv', `id,${long.slice(0, 60_000)}\na,b\n`) }], []), /wide-name\.csv line 1, column 2 \("x{80}… \(60,000 characters\)"\)/],
      ['a value that is not a number', () => loadCsv(graph, [{ table: 'Client', file: file('long-value.csv', `id,name,score:DOUBLE\nyan,Yan,${long}\n`) }], []), /long-value\.csv line 2/],
    ];
    for (const [what, load, message] of cases) {
      const err = await load().catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(Error);
      expect((err as Error).message, `${what}: ${(err as Error).message.slice(0, 500)}`).toMatch(message);
      expect((err as Error).message.length, what).toBeLessThan(600);
    }
  });

  it('loads a quoted value that spans lines, without telling to use an option the command does not take', async () => {
    const notes = file('notes.csv', 'id,text\nn1,"first line\nsecond line"\nn2,plain\n');
    const result = await loadCsv(graph, [{ table: 'Note', file: notes }], []);
    expect(result.tables).toEqual([{ table: 'Note', kind: 'nodes', rows: 2 }]);
    expect(await count("MATCH (n:Note {id: 'n1'}) WHERE n.text = 'first line\nsecond line' RETURN count(n) AS n")).toBe(1);
  });
});
