import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';
import { allRows } from '../../src/graph/graph-source.js';
import { rateOf } from '../../src/cli/graph-load.js';
import { embeddedGraphFolder } from '../../src/sources/graph-registry.js';
import { removeDir } from '../support/databases.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';
import { cli, dbEnv } from './cli-support.js';

describe('alert-webhooks graph load', () => {
  let testDb: TestDatabase;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    testDb = await openTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'aw-graph-load-'));
    await testDb.db.query(`INSERT INTO data_sources (key, name, graph) VALUES ('csv', 'CSV', '{"vendor": "embedded", "allowWrites": true}'), ('plain', 'Plain', NULL)`);
    // The embedded database is held by this process until closed: the command opens it itself.
    if (testDb.kind === 'pglite') await testDb.db.close();
    env = testDb.kind === 'pglite' ? dbEnv(testDb) : { ...dbEnv(testDb), DATA_DIR: dir };
    writeFileSync(path.join(dir, 'clients.csv'), 'id,name\nalice,Alice\nbob,Bob\n');
    writeFileSync(path.join(dir, 'phones.csv'), 'number\n555\n');
    writeFileSync(path.join(dir, 'has.csv'), 'from:Client,to:Phone\nalice,555\nbob,555\n');
    writeFileSync(path.join(dir, 'bad.csv'), 'from:Client,to:Phone\nalice,556\n');
    writeFileSync(path.join(dir, 'clients-wide.csv'), 'id,name,city\ncarol,Carol,Lyon\n');
  });
  afterAll(async () => {
    await testDb?.dispose().catch(() => undefined);
    removeDir(dir);
  });

  it('loads nodes and edges into a source\'s embedded graph and prints counts and time', { timeout: 120_000 }, async () => {
    const at = (name: string) => path.join(dir, name);
    const run = await cli(['graph', 'load', 'csv', '--nodes', `Client=${at('clients.csv')}`, `--nodes=Phone=${at('phones.csv')}`, '--edges', `HAS_PHONE=${at('has.csv')}`], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^nodes Client: 2$/m);
    expect(run.stdout).toMatch(/^edges HAS_PHONE: 2$/m);
    expect(run.stdout).toMatch(/loaded 5 rows into data source "csv" in \d+\.\d s$/m);
    // A rate over 5 rows would be the load's fixed cost, not a rate: said from 10,000 rows (and a second) on.
    expect(run.stdout).not.toMatch(/rows\/s/);
    expect(rateOf(5, 0.4)).toBe('');
    expect(rateOf(1_000_000, 2)).toBe(' (500,000 rows/s)');
    const refused = await cli(['graph', 'load', 'csv', '--edges', `HAS_PHONE=${at('bad.csv')}`], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bad\.csv line 2, column 2 \("to:Phone"\): no node has the key "556"\. Nothing was loaded\./);
    // A file whose header does not fit the table it goes into is refused, naming the column (it was "loaded", each
    // whole line a key).
    const wide = await cli(['graph', 'load', 'csv', '--nodes', `Client=${at('clients-wide.csv')}`], env);
    expect(wide.code).toBe(1);
    expect(wide.stderr).toMatch(/clients-wide\.csv line 1, column 3 \("city"\): table Client has no column 3: a file loaded into an existing table has its columns, in its order \(Client: id STRING, name STRING\)/);
    expect(wide.stderr).not.toMatch(/PARALLEL/i);
    const graph = new EmbeddedGraph({ folder: embeddedGraphFolder(env.DATA_DIR!, 'csv'), bufferPoolBytes: 64 << 20, label: 'csv' });
    try {
      const rows = await allRows(await graph.run('MATCH ()-[h:HAS_PHONE]->() RETURN count(h) AS n', { timeoutMs: 10_000, maxRows: 1, readOnly: true }));
      expect(rows).toEqual([{ n: 2 }]);
      expect(await allRows(await graph.run('MATCH (c:Client) RETURN c.id AS id ORDER BY id', { timeoutMs: 10_000, maxRows: 10, readOnly: true }))).toEqual([{ id: 'alice' }, { id: 'bob' }]);
    } finally {
      await graph.close();
    }
  });

  it('refuses a source without an embedded graph, and a command line without files', { timeout: 60_000 }, async () => {
    const plain = await cli(['graph', 'load', 'plain', '--nodes', `Client=${path.join(dir, 'clients.csv')}`], env);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/data source "plain" has no embedded graph/);
    const usage = await cli(['graph', 'load', 'csv'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/usage: alert-webhooks graph load/);
  });
});
