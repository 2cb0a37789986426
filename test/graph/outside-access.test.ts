import { describe, expect, it } from 'vitest';
import { isSetting, outsideAccess, queryNames, queryWords } from '../../src/graph/outside-access.js';

describe('queries that reach outside the graph', () => {
  it.each([
    "LOAD FROM '/etc/passwd' RETURN *",
    "load with headers (a STRING) from 'f.csv' RETURN a",
    "MATCH (n) WITH n LOAD FROM 'f.csv' RETURN n",
    "MATCH (n) WITH n /* hidden */ LOAD/**/FROM 'f' RETURN n",
    "COPY (MATCH (n) RETURN n) TO '/tmp/x.csv'",
    "COPY Client FROM '/tmp/x.csv'",
    "EXPORT DATABASE '/tmp/x'",
    "IMPORT DATABASE '/tmp/x'",
    "ATTACH '/tmp/db' AS other (dbtype kuzu)",
    'DETACH other',
    'USE other',
    'INSTALL httpfs',
    'LOAD EXTENSION httpfs',
    "EXPLAIN COPY (MATCH (n) RETURN n) TO 'x.csv'",
    "// a comment first\nCOPY Client FROM 'x.csv'",
    "CALL READ_CSV_SERIAL('/etc/hostname') RETURN *",
    "CALL read_parquet('/x.parquet') RETURN *",
    "MATCH (n) CALL JSON_SCAN('/x.json') RETURN n",
    "CALL FILE_INFO('/etc/hostname') RETURN *",
    "CALL _CACHE_ARRAY_COLUMN_LOCALLY('T', 'c') RETURN *",
    // Names backquoted, spaced or commented: one name all the same (the first crashed the Kùzu process).
    "CALL `READ_CSV_SERIAL`('/any') RETURN *",
    "CALL `read_parquet` ('/x.parquet') RETURN *",
    "MATCH (n) CALL /* c */ `JSON_SCAN`('/x.json') RETURN n",
  ])('refuses on the embedded engine: %s', (query) => {
    expect(outsideAccess(query, 'embedded')).toMatch(/outside the graph/);
  });

  it.each([
    'MATCH (n) RETURN n',
    "MATCH (n) WHERE n.name = 'LOAD FROM x; COPY' RETURN n",
    'MATCH (n:Load) WITH n RETURN n.copy, n.load',
    'MATCH (`LOAD`) RETURN 1',
    "CREATE (:Client {id: 'x'})",
    'CALL show_tables() RETURN *',
    'MATCH (a)-[:COPY]->(b) RETURN a // LOAD FROM',
    'MATCH (n:READ_CSV) RETURN n.read_parquet, n.file_info',
    'CALL table_info(\'Client\') RETURN *',
    'MATCH (n) WITH count(n) AS read_total, 1 AS _n RETURN read_total, _n',
    'MATCH (n:`READ_CSV_SERIAL`)-[:`JSON_SCAN`]->(m) RETURN n.`read_parquet`',
  ])('lets through on the embedded engine: %s', (query) => {
    expect(outsideAccess(query, 'embedded')).toBeUndefined();
  });

  it.each([
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "USING PERIODIC COMMIT LOAD CSV WITH HEADERS FROM 'http://127.0.0.1/x' AS row RETURN row",
    "CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value",
    "CALL apoc.cypher.run('LOAD CSV FROM $u AS l RETURN l', {u: 'x'}) YIELD value RETURN value",
    "RETURN apoc.cypher.runFirstColumnSingle('RETURN 1')",
    "CALL apoc.export.csv.all('/tmp/x.csv', {})",
    "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})",
    "CALL `apoc`.`load`.`json`('file:///etc/passwd') YIELD value RETURN value",
    "CALL apoc . load . json('file:///etc/passwd') YIELD value RETURN value",
    "CALL apoc.when(true, \"LOAD CSV FROM 'file:///x' AS l RETURN l\", '') YIELD value RETURN value",
    "CALL apoc.case([true, 'RETURN 1'], '') YIELD value RETURN value",
    "CALL apoc.graph.fromCypher('MATCH (n) RETURN n', {}, 'g', {}) YIELD graph RETURN graph",
    "LOAD PARQUET FROM '/x.parquet' AS row RETURN row",
    "LOAD JSONL FROM '/x.jsonl' AS row RETURN row",
    "CALL json_util.load_from_url('http://127.0.0.1/x') YIELD objects RETURN objects",
    "CALL export_util.json('/tmp/x.json')",
    "CALL migrate.postgresql('t', {}) YIELD row RETURN row",
  ])('refuses on Neo4j and Memgraph: %s', (query) => {
    expect(outsideAccess(query, 'neo4j')).toMatch(/outside the graph/);
  });

  it.each(["CALL apoc.path.expand(n, 'KNOWS', null, 1, 2) YIELD path RETURN path", "MATCH (n) WHERE n.note = 'LOAD CSV' RETURN n", 'MATCH (n:Load) RETURN n'])(
    'lets through on Neo4j and Memgraph: %s',
    (query) => {
      expect(outsideAccess(query, 'neo4j')).toBeUndefined();
    },
  );

  it('reads names whole however written, labels and types left out', () => {
    expect(queryNames("CALL `apoc`.`lo``ad`.json /* x */ . x(1) YIELD v MATCH (n:`A b`)-[:T]->(m) RETURN n.a, `b c`, 'x.y'")).toEqual(['CALL', 'apoc.lo`ad.json.x', 'YIELD', 'v', 'MATCH', 'n', 'm', 'RETURN', 'n.a', 'b c']);
  });

  it.each([
    ['CALL threads=7', true],
    ['/* c */ CALL threads = 7', true],
    ['// c\nCALL var_length_extend_max_depth=1000', true],
    ['CALL `threads`=2', true],
    ['CALL show_tables() RETURN *', false],
    ['MATCH (n) WHERE n.x = 1 RETURN n', false],
    ["RETURN 'CALL threads=7'", false],
  ] as const)('knows a setting: %s', (query, setting) => {
    expect(isSetting(query)).toBe(setting);
  });

  it('reads words outside strings, comments and backquoted names, an unclosed one to the end', () => {
    expect(queryWords("MATCH (n:Label) WHERE n.x = 'a \\' LOAD' // LOAD\nRETURN `LOAD FROM`")).toEqual(['MATCH', 'n', ':Label', 'WHERE', 'n.x', 'RETURN', '`']);
    expect(queryWords("RETURN 'unclosed LOAD FROM")).toEqual(['RETURN']);
    expect(queryWords('RETURN 1 /* unclosed LOAD FROM')).toEqual(['RETURN']);
  });
});
