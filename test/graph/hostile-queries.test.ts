import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { ADMIN_PASSWORD, useTestService, type ApiAnswer, type ApiClient } from '../support/test-service.js';

/*
 * Issue 39's differential suite: queries generated from Kùzu's lexical rules (comments, whitespace and line-break
 * classes, strings with escapes, backquoted names, case, look-alike letters, EXPLAIN/PROFILE) around each operation
 * that reaches outside the graph or changes a setting, sent as an Analyst and as an Admin (on a graph that allows
 * writes, so a refusal comes from the engine's plan and its allow-list, not from the read-only transaction). None may
 * run: no file read (no answer holds the sentinel, the environment or /etc/hostname), no file or folder written
 * (the folder they aim at lists the same before and after), no setting changed, the graph unchanged.
 *
 * Every path the queries name is in a folder of this file's own, outside the graph's folder (the graph lives under
 * the test database's DATA_DIR). Nothing here touches the network: `INSTALL json` and `LOAD EXTENSION json` answer
 * "already statically linked" in Kùzu 0.11.3 without a download (checked under strace: no connect()).
 */

const SOURCE = 'hostile';
const OUTSIDE = mkdtempSync(path.join(tmpdir(), 'hostile-queries-'));
const SECRET = path.join(OUTSIDE, 'secret.txt');
const TOKEN = `sentinel-${randomBytes(16).toString('hex')}`;
writeFileSync(SECRET, `${TOKEN}\n`);
// An export as Kùzu writes one, by hand: IMPORT DATABASE of it would add a table Intruder (Kùzu commits an IMPORT
// even inside BEGIN TRANSACTION READ ONLY, the issue says), so the graph's table list shows whether one ran.
const IMPORTABLE = path.join(OUTSIDE, 'imp');
mkdirSync(IMPORTABLE);
writeFileSync(path.join(IMPORTABLE, 'schema.cypher'), 'CREATE NODE TABLE Intruder(id STRING, PRIMARY KEY(id));\n');
writeFileSync(path.join(IMPORTABLE, 'copy.cypher'), `COPY Intruder FROM "${path.join(IMPORTABLE, 'intruder.csv')}" (header=false);\n`);
writeFileSync(path.join(IMPORTABLE, 'macro.cypher'), '');
writeFileSync(path.join(IMPORTABLE, 'intruder.csv'), `${TOKEN}\n`);

/** What no answer may hold: the sentinel, the admin password (as /proc/self/environ would show it), /etc/hostname's lines. */
const FORBIDDEN_TEXT = [
  TOKEN,
  'ADMIN_PASSWORD',
  ADMIN_PASSWORD,
  ...(existsSync('/etc/hostname') ? readFileSync('/etc/hostname', 'utf8').split(/\r?\n/).map((line) => line.trim()).filter((line) => line.length >= 4) : []),
];

/** Every file and folder under OUTSIDE, with each file's size: a file written, or one overwritten, changes it. */
function listOutside(): string[] {
  return readdirSync(OUTSIDE, { recursive: true, encoding: 'utf8' })
    .map((name) => {
      const stat = statSync(path.join(OUTSIDE, name));
      return stat.isDirectory() ? `${name}/` : `${name} ${stat.size}`;
    })
    .sort();
}
const OUTSIDE_BEFORE = listOutside();

/** Takes away what a query that ran left in OUTSIDE (after the test has failed on it), so the next query is judged alone. */
function restoreOutside(): void {
  const before = new Set(OUTSIDE_BEFORE.map((entry) => entry.split(/[/ ]/)[0]));
  for (const name of readdirSync(OUTSIDE)) if (!before.has(name)) rmSync(path.join(OUTSIDE, name), { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// The generator: forbidden operations × the engine's lexical rules, a deterministic bounded product.

type Kind = 'read' | 'write' | 'setting';
interface Operation {
  name: string;
  kind: Kind;
  query: string;
  /** May follow a `WITH …` (a reading clause or an in-query CALL), so a prefix statement can carry a trick. */
  chainable: boolean;
}

const OPERATIONS: Operation[] = [
  { name: 'LOAD FROM', kind: 'read', chainable: true, query: `LOAD FROM "${SECRET}" (file_format="csv", header=false) RETURN *` },
  { name: 'LOAD WITH HEADERS', kind: 'read', chainable: true, query: `LOAD WITH HEADERS (a STRING) FROM "${SECRET}" (file_format="csv", header=false) RETURN a` },
  { name: 'READ_CSV_PARALLEL', kind: 'read', chainable: true, query: `CALL READ_CSV_PARALLEL("${SECRET}") RETURN *` },
  { name: 'READ_CSV_SERIAL', kind: 'read', chainable: true, query: `CALL READ_CSV_SERIAL('${SECRET}', header:=false) RETURN *` },
  { name: 'READ_PARQUET', kind: 'read', chainable: true, query: `CALL READ_PARQUET('${SECRET}') RETURN *` },
  { name: 'JSON_SCAN', kind: 'read', chainable: true, query: `CALL JSON_SCAN('${SECRET}') RETURN *` },
  { name: 'FILE_INFO', kind: 'read', chainable: true, query: `CALL FILE_INFO('${SECRET}') RETURN *` },
  { name: 'COPY TO', kind: 'write', chainable: false, query: `COPY (MATCH (n) RETURN n) TO '${OUTSIDE}/out.csv'` },
  { name: 'COPY FROM', kind: 'write', chainable: false, query: `COPY Note FROM '${SECRET}' (file_format="csv", header=false)` },
  { name: 'EXPORT DATABASE', kind: 'write', chainable: false, query: `EXPORT DATABASE '${OUTSIDE}/exp'` },
  { name: 'IMPORT DATABASE', kind: 'write', chainable: false, query: `IMPORT DATABASE '${IMPORTABLE}'` },
  { name: 'ATTACH', kind: 'write', chainable: false, query: `ATTACH '${OUTSIDE}/other' AS o (dbtype kuzu)` },
  { name: 'INSTALL', kind: 'write', chainable: false, query: 'INSTALL json' },
  { name: 'LOAD EXTENSION', kind: 'write', chainable: false, query: 'LOAD EXTENSION json' },
  { name: 'threads', kind: 'setting', chainable: false, query: 'CALL threads=1' },
  { name: 'timeout', kind: 'setting', chainable: false, query: 'CALL timeout=1' },
  { name: 'home_directory', kind: 'setting', chainable: false, query: `CALL home_directory='${OUTSIDE}'` },
  { name: 'var_length_extend_max_depth', kind: 'setting', chainable: false, query: 'CALL var_length_extend_max_depth=1000' },
];

/** Kùzu's whitespace and line-break classes, and the characters other lexers take for spaces (JavaScript's `\s`, Neo4j's). */
const WHITESPACE = [
  ' ', '\t', '\n', '\v', '\f', '\r', '\u0085', '\u00a0', '\u1680', '\u180e',
  ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i)),
  '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\x1c', '\x1d', '\x1e', '\x1f',
];

/** Applies `change` to the query's code only: its quoted strings and backquoted names (the paths) are kept as they are. */
function outsideQuotes(query: string, change: (code: string) => string): string {
  return query
    .split(/('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : change(part)))
    .join('');
}

/** Letters that look like a keyword's: Cyrillic ones, and ones whose case folds onto ASCII (ſ → S, ı → I, K → k). */
const LOOK_ALIKES: Record<string, string>[] = [
  { A: '\u0410', C: '\u0421', E: '\u0415', O: '\u041e', P: '\u0420', T: '\u0422', H: '\u041d', M: '\u041c', X: '\u0425', K: '\u041a', I: '\u0406', S: '\u0405' },
  { S: '\u017f', I: '\u0131', K: '\u212a', L: '\uff2c', C: '\uff23', E: '\uff25', A: '\uff21', O: '\uff2f', P: '\uff30' },
];

/** Replaces the first letter of the query's first keyword that has a look-alike. */
function lookAlike(query: string, table: Record<string, string>): string | undefined {
  const keyword = /^[A-Z]+/.exec(query)?.[0] ?? '';
  const at = [...keyword].findIndex((letter) => table[letter] !== undefined);
  return at < 0 ? undefined : query.slice(0, at) + table[keyword[at]!] + query.slice(at + 1);
}

/** A deterministic generator (mulberry32), so the sample sent through alertPreview is the same on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Wrapper {
  name: string;
  wrap(op: Operation, index: number): string | undefined;
}

const ODD_STARS = (q: string) => `/* **/ ' */ ${q} // '`;
const PREFIXES = ['EXPLAIN ', 'PROFILE ', 'EXPLAIN LOGICAL '];
/** How many whitespace classes each operation is spelt with (round-robin over WHITESPACE: each class is used at least once). */
const WHITESPACE_PER_OPERATION = 3;

const WRAPPERS: Wrapper[] = [
  { name: 'as written', wrap: (op) => op.query },
  { name: '/* **/ (Kùzu does not close it)', wrap: (op) => ODD_STARS(op.query) },
  { name: '// ended by LF', wrap: (op) => `// a comment\n${op.query}` },
  { name: '// ended by CR', wrap: (op) => `// a comment ' \r${op.query}` },
  { name: '// ended by CRLF', wrap: (op) => `// a comment\r\n${op.query}` },
  { name: '/**/ for every space', wrap: (op) => outsideQuotes(op.query, (code) => code.replaceAll(' ', '/**/')) },
  { name: '/* **/ */ for every space', wrap: (op) => outsideQuotes(op.query, (code) => code.replaceAll(' ', '/* **/ */')) },
  ...Array.from({ length: WHITESPACE_PER_OPERATION }, (_, j): Wrapper => ({
    name: `whitespace #${j}`,
    wrap: (op, index) => {
      const space = WHITESPACE[(index * WHITESPACE_PER_OPERATION + j) % WHITESPACE.length]!;
      return outsideQuotes(op.query, (code) => code.replaceAll(' ', space));
    },
  })),
  { name: 'mixed case', wrap: (op) => outsideQuotes(op.query, (code) => [...code].map((c, i) => (i % 2 ? c.toLowerCase() : c.toUpperCase())).join('')) },
  { name: 'Cyrillic look-alike', wrap: (op) => lookAlike(op.query, LOOK_ALIKES[0]!) },
  { name: 'case-folding look-alike', wrap: (op) => lookAlike(op.query, LOOK_ALIKES[1]!) },
  ...PREFIXES.map((prefix): Wrapper => ({ name: `${prefix.trim()} prefix`, wrap: (op) => `${prefix}${op.query}` })),
  { name: '/* **/ around a prefix', wrap: (op, index) => ODD_STARS(`${PREFIXES[index % PREFIXES.length]}${op.query}`) },
  { name: '/* **/ with U+180E spaces', wrap: (op) => ODD_STARS(outsideQuotes(op.query, (code) => code.replaceAll(' ', '\u180e'))) },
  { name: 'string escapes in a comment', wrap: (op) => `/* '\\'' "\\"" '\\\\' */ ${op.query} // '\\''` },
  // Tricks that need a statement before the operation: the operation follows a WITH.
  { name: 'UNWIND with a // ended by CR', wrap: (op) => (op.chainable ? `UNWIND [4 //* */ 2] AS y\r${op.query}` : undefined) },
  { name: 'strings with escapes before', wrap: (op) => (op.chainable ? `UNWIND ['\\'', "\\"", '\\\\'] AS s WITH s ${op.query}` : undefined) },
  { name: 'a string ending in a backslash before', wrap: (op) => (op.chainable ? `WITH '\\\\' AS s, "it's" AS t ${op.query}` : undefined) },
  {
    name: 'backquoted name',
    wrap: (op) => {
      const call = /^CALL ([A-Za-z_]+)/.exec(op.query);
      return call ? `CALL \`${call[1]}\`${op.query.slice(call[0].length)}` : undefined;
    },
  },
];

interface Generated {
  label: string;
  query: string;
  kind: Kind;
}

const GENERATED: Generated[] = (() => {
  const seen = new Set<string>();
  const out: Generated[] = [];
  OPERATIONS.forEach((op, index) => {
    for (const wrapper of WRAPPERS) {
      const query = wrapper.wrap(op, index);
      if (query === undefined || seen.has(query)) continue;
      seen.add(query);
      out.push({ label: `#${out.length} ${op.name} × ${wrapper.name}: ${JSON.stringify(query)}`, query, kind: op.kind });
    }
  });
  return out;
})();

/** About one generated query in eight, picked by a seeded generator, also goes through alertPreview (which answers values). */
const PREVIEWED: Generated[] = (() => {
  const random = seeded(39);
  return GENERATED.filter(() => random() < 0.125);
})();

// ---------------------------------------------------------------------------------------------------------------

const COLUMN0 = [{ type: 'string', columnTitle: 'c', columnName: 'column0' }];

describe('hostile graph queries (issue 39): none reads or writes a file, changes a setting or the graph', () => {
  // The engine's process inherits this process's environment unless it is confined: put the admin password and the
  // sentinel there, as `npm start` with ADMIN_PASSWORD set would, so reading /proc/self/environ would show them.
  const savedEnv = { ADMIN_PASSWORD: process.env.ADMIN_PASSWORD, HOSTILE_SENTINEL: process.env.HOSTILE_SENTINEL };
  beforeAll(() => {
    process.env.ADMIN_PASSWORD = ADMIN_PASSWORD;
    process.env.HOSTILE_SENTINEL = TOKEN;
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(OUTSIDE, { recursive: true, force: true });
  });

  const t = useTestService();
  let analyst: ApiClient;
  let before: GraphState;

  interface GraphState {
    nodes: number;
    edges: number;
    tables: string[];
  }

  async function preview(client: ApiClient, query: string, columns: { type: string; columnTitle: string; columnName: string }[], limit = 50): Promise<ApiAnswer> {
    return client.post(`/api/${SOURCE}/graph/alertPreview`, { query, columns, limit });
  }

  /** The one value of a one-row, one-column preview. */
  async function value(query: string, type: 'string' | 'number' = 'number'): Promise<unknown> {
    const answer = await preview(t.admin, query, [{ type, columnTitle: 'v', columnName: 'v' }]);
    expect(answer.status, `${JSON.stringify(query)}: ${JSON.stringify(answer.body)}`).toBe(200);
    return answer.body[0].columns[0];
  }

  async function graphState(): Promise<GraphState> {
    const tables = await preview(t.admin, 'CALL show_tables() RETURN name AS v ORDER BY v', [{ type: 'string', columnTitle: 'v', columnName: 'v' }]);
    expect(tables.status, JSON.stringify(tables.body)).toBe(200);
    return {
      nodes: Number(await value('MATCH (n) RETURN count(n) AS v')),
      edges: Number(await value('MATCH ()-[r]->() RETURN count(r) AS v')),
      tables: tables.body.map((row: { columns: unknown[] }) => row.columns[0]),
    };
  }

  /**
   * The answer to a query that must not run: 4xx, never 200; 400 bad_graph_request (an Analyst's write, and any
   * write in a preview, may be 403 forbidden instead); nothing read in the body; nothing written outside the graph.
   */
  function expectRefused(answer: ApiAnswer, query: string, who: 'Analyst' | 'Admin', kind: Kind, route = 'run/query'): void {
    const said = `${who} ${route} ${JSON.stringify(query)} answered ${answer.status} ${JSON.stringify(answer.body)}`;
    try {
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      expect(FORBIDDEN_TEXT.filter((secret) => text.includes(secret)), `${said}: the answer holds what a file or the environment holds`).toEqual([]);
      expect(listOutside(), `${said}: a file or folder was written outside the graph`).toEqual(OUTSIDE_BEFORE);
      expect(answer.status, said).not.toBe(200);
      // alertPreview runs read-only for everyone (it never runs again as a write): there an Admin's write is 403 too.
      const mayBeWriteForbidden = (who === 'Analyst' || route === 'alertPreview') && kind !== 'read';
      if (mayBeWriteForbidden && answer.status === 403) expect(answer.body?.key, said).toBe('forbidden');
      else {
        expect(answer.status, said).toBe(400);
        expect(answer.body?.key, said).toBe('bad_graph_request');
      }
    } finally {
      restoreOutside();
    }
  }

  /**
   * After a setting's spelling, the settings a user could notice are the engine's: a query answers within its own
   * time-out (not `CALL timeout=1`'s) and a path may not be longer than 30 hops (not var_length_extend_max_depth=1000's).
   * Kùzu keeps a setting on the connection that ran it, and the pool hands the most recently used connection out first,
   * so queries sent at once after it see it.
   */
  async function expectSettingsKept(after: string, who: string): Promise<void> {
    const said = `after ${who}'s ${JSON.stringify(after)}`;
    const plain = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: 'MATCH (c:Client) RETURN c', timeout: 10_000 });
    expect(plain.status, `${said}, a plain query answered ${JSON.stringify(plain.body)}`).toBe(200);
    expect(plain.body.nodes, said).toHaveLength(3);
    const deeper = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: 'MATCH (a:Client)-[:KNOWS*1..31]->(b:Client) RETURN a, b' });
    expect(deeper.status, `${said}, a path of up to 31 hops (over the engine's 30) answered ${deeper.status} ${JSON.stringify(deeper.body)}`).toBe(400);
    expect(deeper.body.message, said).toMatch(/exceeds maximum: 30/);
  }

  async function refusedEverywhere(query: string, kind: Kind, route: 'run/query' | 'alertPreview' = 'run/query'): Promise<void> {
    for (const [who, client] of [['Analyst', analyst], ['Admin', t.admin]] as const) {
      const answer = route === 'run/query' ? await client.post(`/api/${SOURCE}/graph/run/query`, { query }) : await preview(client, query, COLUMN0);
      expectRefused(answer, query, who, kind, route);
      if (kind === 'setting') await expectSettingsKept(query, who);
    }
  }

  beforeAll(async () => {
    // A small graph that allows writes (the default for an embedded one): an Admin's refusals come from the allow-list.
    const created = await t.admin.post('/api/admin/sources', { key: SOURCE, name: 'Hostile', graph: { vendor: 'embedded', allowWrites: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.graph).toEqual({ vendor: 'embedded', allowWrites: true });
    for (const query of [
      'CREATE NODE TABLE Client(id STRING, name STRING, load INT64, PRIMARY KEY(id))',
      'CREATE NODE TABLE Note(line STRING, PRIMARY KEY(line))',
      'CREATE REL TABLE KNOWS(FROM Client TO Client)',
      "CREATE (:Client {id: 'alice', name: 'Alice', load: 1})-[:KNOWS]->(:Client {id: 'bob', name: 'Bob', load: 2})-[:KNOWS]->(:Client {id: 'carol', name: 'Carol', load: 3})",
      "CREATE (:Note {line: 'a note'})",
    ]) {
      const answer = await t.admin.post(`/api/${SOURCE}/graph/run/query`, { query });
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    analyst = await t.userClient('hostile-analyst');
    before = await graphState();
    expect(before).toEqual({ nodes: 4, edges: 2, tables: ['Client', 'KNOWS', 'Note'] });
  });

  it('generates a bounded set: every operation, every whitespace class, each spelling', () => {
    expect(GENERATED.length).toBeGreaterThan(300);
    expect(GENERATED.length).toBeLessThanOrEqual(400);
    for (const op of OPERATIONS) expect(GENERATED.filter((g) => g.label.includes(` ${op.name} × `)).length, op.name).toBeGreaterThanOrEqual(15);
    const spelt = WHITESPACE.filter((space) => GENERATED.some((g) => g.label.includes('× whitespace') && g.query.includes(space)));
    // The ASCII space's spelling is the query as written (kept once).
    expect(spelt.map((s) => s.codePointAt(0)!.toString(16))).toEqual(WHITESPACE.filter((s) => s !== ' ').map((s) => s.codePointAt(0)!.toString(16)));
    expect(PREVIEWED.length).toBeGreaterThanOrEqual(20);
  });

  it('still runs what only looks like a forbidden operation (so the suite would fail if everything were refused)', async () => {
    const comment = `MATCH (c:Client) /* LOAD FROM "${SECRET}" (file_format="csv") RETURN * */ RETURN c`;
    for (const client of [analyst, t.admin]) {
      const answer = await client.post(`/api/${SOURCE}/graph/run/query`, { query: comment });
      expect(answer.status, `${JSON.stringify(comment)}: ${JSON.stringify(answer.body)}`).toBe(200);
      expect(answer.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['Client:alice', 'Client:bob', 'Client:carol']);
    }
    const lineComment = `MATCH (c:Client) // COPY Note FROM '${SECRET}'\nRETURN c`;
    expect((await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: lineComment })).status, JSON.stringify(lineComment)).toBe(200);
    // The issue's `//*` is a division and a block comment to Kùzu, not a line comment: a reader that admits it must run it.
    const division = 'UNWIND [4 //* */ 2] AS y\rMATCH (c:Client) WHERE c.load <= y RETURN c';
    const divided = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: division });
    expect(divided.status, `${JSON.stringify(division)}: ${JSON.stringify(divided.body)}`).toBe(200);
    expect(divided.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['Client:alice', 'Client:bob']);
    const literal = `MATCH (c:Client) WHERE c.name <> "COPY (MATCH (n) RETURN n) TO '${OUTSIDE}/allowed.csv'" RETURN c.id AS id, 'EXPORT DATABASE \\'x\\'' AS s ORDER BY id`;
    const literalAnswer = await preview(analyst, literal, [{ type: 'string', columnTitle: 'id', columnName: 'id' }, { type: 'string', columnTitle: 's', columnName: 's' }]);
    expect(literalAnswer.status, `${JSON.stringify(literal)}: ${JSON.stringify(literalAnswer.body)}`).toBe(200);
    expect(literalAnswer.body.map((row: { columns: unknown[] }) => row.columns)).toEqual([['alice', "EXPORT DATABASE 'x'"], ['bob', "EXPORT DATABASE 'x'"], ['carol', "EXPORT DATABASE 'x'"]]);
    const property = 'MATCH (c:Client) WHERE c.load > 1 RETURN c.load AS load ORDER BY load';
    const propertyAnswer = await preview(analyst, property, [{ type: 'number', columnTitle: 'load', columnName: 'load' }]);
    expect(propertyAnswer.status, `${JSON.stringify(property)}: ${JSON.stringify(propertyAnswer.body)}`).toBe(200);
    expect(propertyAnswer.body.map((row: { columns: unknown[] }) => row.columns[0])).toEqual([2, 3]);
    expect((await preview(analyst, 'CALL show_tables() RETURN name', [{ type: 'string', columnTitle: 'n', columnName: 'name' }])).status).toBe(200);
    // An Admin's write on a graph that allows writes still runs (it changes nothing countable); an Analyst's is 403.
    const write = "MATCH (c:Client {id: 'alice'}) SET c.name = 'Alice'";
    expect((await t.admin.post(`/api/${SOURCE}/graph/run/query`, { query: write })).status).toBe(200);
    expect((await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: write })).body.key).toBe('forbidden');
    expect(listOutside()).toEqual(OUTSIDE_BEFORE);
  });

  describe('the reproductions of issue 39, as written (the path made the sentinel, or /proc/self/environ)', () => {
    it.each([
      '/* **/ \' */ LOAD FROM "/proc/self/environ" (file_format="csv", header=false, delim="|") RETURN * // \'',
      `/* **/ ' */ LOAD FROM "${SECRET}" (file_format="csv", header=false, delim="|") RETURN * // '`,
    ])('alertPreview refuses the unclosed /* **/: %j', async (query) => {
      await refusedEverywhere(query, 'read', 'alertPreview');
      await refusedEverywhere(query, 'read', 'run/query');
    });

    it.each(['/etc/hostname', SECRET, '/proc/self/environ'])('refuses a // comment ended by CR hiding LOAD FROM %s', async (file) => {
      const query = `UNWIND [4 //* */ 2] AS y\rLOAD FROM "${file}" (file_format="csv", header=false) RETURN column0`;
      await refusedEverywhere(query, 'read', 'run/query');
      await refusedEverywhere(query, 'read', 'alertPreview');
    });

    it.each([
      [`COPY (MATCH (c:Client) RETURN c.id) TO '${OUTSIDE}/copied.csv'`],
      [`EXPORT DATABASE '${OUTSIDE}/exported'`],
      [`IMPORT DATABASE '${IMPORTABLE}'`],
    ])('refuses %j through run/query, plainly and through the /* **/ opening', async (query) => {
      await refusedEverywhere(query, 'write');
      await refusedEverywhere(ODD_STARS(query), 'write');
      await refusedEverywhere(`UNWIND [4 //* */ 2] AS y\r${query}`, 'write');
      expect(await graphState()).toEqual(before);
    });

    it('refuses the settings JavaScript\'s \\s misses, and EXPLAIN LOGICAL EXPORT (which creates its folder)', async () => {
      for (const query of ['CALL\u180ethreads=1', 'CALL\x1cvar_length_extend_max_depth=1000', `PROFILE CALL home_directory='${OUTSIDE}'`]) {
        await refusedEverywhere(query, 'setting');
      }
      await refusedEverywhere(`EXPLAIN LOGICAL EXPORT DATABASE '${OUTSIDE}/explained'`, 'write');
    });

    it('an Admin\'s alert with the /* **/ trick is refused, or its run records no file content anywhere an Analyst reads', async () => {
      const queries = [
        { name: 'secret', query: `/* **/ ' */ MATCH (c:Client) WITH c LOAD FROM "${SECRET}" (file_format="csv", header=false) RETURN c, column0 AS line // '` },
        { name: 'environment', query: '/* **/ \' */ MATCH (c:Client) WITH c LOAD FROM "/proc/self/environ" (file_format="csv", header=false, delim="|") RETURN c, column0 AS line // \'' },
      ];
      for (const q of queries) {
        const saved = await t.admin.post(`/api/admin/${SOURCE}/alerts`, {
          title: `Hostile ${q.name}`,
          queries: [q],
          columns: [{ type: 'string', columnTitle: 'line', columnName: 'line' }],
          target: 'c',
        });
        const said = `${JSON.stringify(q.query)}: ${saved.status} ${JSON.stringify(saved.body)}`;
        expect(FORBIDDEN_TEXT.filter((secret) => JSON.stringify(saved.body).includes(secret)), said).toEqual([]);
        if (saved.status !== 201) {
          expect(saved.status, said).toBe(400);
          continue;
        }
        const id = saved.body.id as number;
        const run = await t.admin.post(`/api/admin/${SOURCE}/alerts/${id}/run`, { waitForRun: true });
        expect(run.status, JSON.stringify(run.body)).toBe(200);
        const read: ApiAnswer[] = [
          await analyst.get(`/api/${SOURCE}/alerts`),
          await analyst.get(`/api/${SOURCE}/alerts/${id}`),
          await analyst.get(`/api/${SOURCE}/alerts/${id}/runs`),
        ];
        const cases = await analyst.get(`/api/${SOURCE}/alerts/${id}/cases`);
        read.push(cases);
        for (const kase of cases.body.cases ?? []) {
          read.push(await analyst.get(`/api/${SOURCE}/alerts/${id}/cases/${kase.id}`));
          read.push(await analyst.get(`/api/${SOURCE}/alerts/${id}/cases/${kase.id}/matches`));
        }
        const leaked = read.filter((answer) => FORBIDDEN_TEXT.some((secret) => JSON.stringify(answer.body).includes(secret)));
        expect(leaked.map((answer) => JSON.stringify(answer.body).slice(0, 600)), `the run of ${said} recorded a file's content where Analysts read it`).toEqual([]);
      }
      expect(listOutside()).toEqual(OUTSIDE_BEFORE);
    });
  });

  describe(`generated from the engine's lexical rules: ${GENERATED.length} queries, each as an Analyst and as an Admin`, () => {
    it.each(GENERATED)('run/query refuses $label', async ({ query, kind }) => {
      await refusedEverywhere(query, kind, 'run/query');
    });

    it.each(PREVIEWED)('alertPreview refuses $label', async ({ query, kind }) => {
      await refusedEverywhere(query, kind, 'alertPreview');
    });
  });

  it('left the graph, its settings and the folder outside as they were', async () => {
    expect(await graphState()).toEqual(before);
    // A query of a known size still answers all its rows, and every node (no setting capped them).
    const rows = await preview(analyst, 'UNWIND range(1, 40) AS i RETURN i', [{ type: 'number', columnTitle: 'i', columnName: 'i' }]);
    expect(rows.status, JSON.stringify(rows.body)).toBe(200);
    expect(rows.body.map((row: { columns: unknown[] }) => row.columns[0])).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const nodes = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: 'MATCH (n) RETURN n' });
    expect(nodes.status).toBe(200);
    expect(nodes.body.nodes).toHaveLength(before.nodes);
    // var_length_extend_max_depth is still the engine's 30.
    const deeper = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: 'MATCH (a:Client)-[:KNOWS*1..31]->(b:Client) RETURN a, b' });
    expect(deeper.status, JSON.stringify(deeper.body)).toBe(400);
    // A query still honours its own time-out (not a `CALL timeout=1` left behind), and the next one runs.
    const slow = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: `${SLOW_CROSS_PRODUCT} RETURN count(*) AS s`, timeout: 300 });
    expect(slow.status, JSON.stringify(slow.body)).toBe(504);
    expect(slow.body.key).toBe('graph_request_timeout');
    const count = await analyst.post(`/api/${SOURCE}/graph/run/query`, { query: 'MATCH (c:Client) RETURN c' });
    expect(count.status, JSON.stringify(count.body)).toBe(200);
    expect(count.body.nodes).toHaveLength(3);
    expect(listOutside()).toEqual(OUTSIDE_BEFORE);
  });
});
