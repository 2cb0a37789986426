import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BoltGraph } from '../../src/graph/bolt/bolt-graph.js';
import { EmbeddedGraph } from '../../src/graph/embedded/embedded-graph.js';
import { GraphError } from '../../src/graph/graph-source.js';
import { checkQueryBounds, MAX_CASE_DEPTH, MAX_QUERY_CHARACTERS, MAX_QUERY_DEPTH, MAX_QUERY_TOKENS, measureQuery } from '../../src/graph/query-bounds.js';
import { removeDir } from '../support/databases.js';

const refusal = (query: string) => {
  try {
    checkQueryBounds(query);
  } catch (err) {
    expect(err).toBeInstanceOf(GraphError);
    expect((err as GraphError).key).toBe('bad_graph_request');
    return (err as GraphError).message;
  }
  return undefined;
};
const nest = (depth: number) => `RETURN ${'('.repeat(depth)}1${')'.repeat(depth)} AS x`;

describe('the bounds on a query\'s text', () => {
  it('passes an ordinary query, and one at each bound', () => {
    expect(refusal("MATCH p = (a:Client)-[:HAS_PHONE]->(ph:Phone)<-[:HAS_PHONE]-(b:Client) WHERE a.id < b.id AND a.name IN ['x', 'y'] RETURN p, CASE WHEN a.age > 3 THEN [a.name] ELSE {n: a.name} END AS v")).toBeUndefined();
    expect(refusal(nest(MAX_QUERY_DEPTH))).toBeUndefined();
    expect(refusal(`RETURN ${'CASE WHEN true THEN '.repeat(MAX_CASE_DEPTH)}1${' END'.repeat(MAX_CASE_DEPTH)}`)).toBeUndefined();
    expect(measureQuery(`RETURN ${Array(1250).fill('1').join('+')}`).tokens).toBe(MAX_QUERY_TOKENS);
    expect(refusal(`RETURN ${Array(1250).fill('1').join('+')}`)).toBeUndefined();
    expect(refusal(`RETURN '${'x'.repeat(MAX_QUERY_CHARACTERS - 20)}'`)).toBeUndefined();
  });

  it('refuses past each bound, naming it and its value', () => {
    expect(refusal(nest(5_000))).toBe('the query is nested 5,000 deep, over the 32 a query may nest: take out parentheses, brackets, braces or CASE expressions held inside one another (counted in strings too)');
    expect(refusal(`RETURN ${'[{a: '.repeat(20)}1${'}]'.repeat(20)}`)).toMatch(/^the query is nested 40 deep, over the 32/);
    expect(refusal(`RETURN ${'CASE WHEN true THEN '.repeat(13)}1${' END'.repeat(13)}`)).toMatch(/^the query nests CASE expressions 13 deep, over the 12/);
    expect(refusal(`RETURN ${Array(47_000).fill('1').join('+')}`)).toBe('the query holds about 94,000 tokens (words, numbers and punctuation), over the 2,500 a query may hold: shorten it, or pass long lists of values as one list (UNWIND)');
    expect(refusal('x'.repeat(MAX_QUERY_CHARACTERS + 1))).toMatch(/^the query is 100,001 characters long, over the 100,000 a query may hold/);
  });

  it('counts in strings and comments, and a space no ASCII space as a token: it only refuses', () => {
    expect(measureQuery(`RETURN '${'('.repeat(40)}' AS s`).depth).toBe(40);
    expect(measureQuery('/* ((( */ RETURN 1').depth).toBe(3);
    expect(measureQuery('RETURN true\u3000AND\u180etrue').tokens).toBe(6);
    expect(measureQuery('RETURN "Zoë Ångström" AS n').tokens).toBe(7);
  });

  it('is checked before any engine sees the query: no process started, no server reached', async () => {
    const folder = path.join(mkdtempSync(path.join(tmpdir(), 'aw-bounds-')), 'graph');
    const embedded = new EmbeddedGraph({ folder, bufferPoolBytes: 64 << 20, label: 'data source "bounds"' });
    const bolt = new BoltGraph({ url: 'bolt://127.0.0.1:1', user: 'neo4j', password: 'unused', label: 'data source "bounds"' });
    try {
      const options = { timeoutMs: 1_000, maxRows: 1, readOnly: true };
      for (const refused of [embedded.run(nest(5_000), options), embedded.subgraph(nest(5_000), { ...options, maxItems: 1 }), bolt.run(nest(5_000), options), bolt.subgraph(nest(5_000), { ...options, maxItems: 1 })]) {
        await expect(refused).rejects.toMatchObject({ key: 'bad_graph_request', message: expect.stringMatching(/nested 5,000 deep/) });
      }
      expect(existsSync(folder)).toBe(false);
    } finally {
      await embedded.close();
      await bolt.close();
      removeDir(path.dirname(folder));
    }
  });
});
