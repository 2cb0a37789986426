import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';
import { allRows } from '../../src/graph/graph-source.js';
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
    expect(run.stdout).toMatch(/loaded 5 rows into data source "csv" in \d+\.\d s/);
    const refused = await cli(['graph', 'load', 'csv', '--edges', `HAS_PHONE=${at('bad.csv')}`], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bad\.csv line 2, column 2 \("to:Phone"\): no node has the key "556"\. Nothing was loaded\./);
    const graph = new EmbeddedGraph({ folder: embeddedGraphFolder(env.DATA_DIR!, 'csv'), bufferPoolBytes: 64 << 20, label: 'csv' });
    try {
      const rows = await allRows(await graph.run('MATCH ()-[h:HAS_PHONE]->() RETURN count(h) AS n', { timeoutMs: 10_000, maxRows: 1, readOnly: true }));
      expect(rows).toEqual([{ n: 2 }]);
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
