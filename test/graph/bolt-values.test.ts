import neo4j from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import { boltError, boltRow, unreachableMessage } from '../../src/graph/bolt/bolt-graph.js';
import { boltValue } from '../../src/graph/bolt/bolt-values.js';
import { GraphError } from '../../src/graph/graph-source.js';
import { EdgeValue, NodeValue, PathValue, Subgraph } from '../../src/graph/items.js';

// neo4j-driver's own classes, built as the driver builds them from a server's answer: no server needed.
const { Node, Relationship, Path, PathSegment, Neo4jError } = neo4j;
const { Date: BoltDate, DateTime, LocalDateTime, Time, LocalTime, Duration, Point } = neo4j.types;
const READ_AT = 1_700_000_000_000;
const int = neo4j.int;

const alice = new Node(int(1), ['Client', 'Person'], { id: 'alice', score: int(42), born: new BoltDate(int(1990), int(4), int(1)) }, '4:db:1');
const carol = new Node(int(3), ['Client'], { id: 'carol' }, '4:db:3');
const phone = new Node(int(7), ['Phone'], { number: int(5550100) }, '4:db:7');
const transfer = new Relationship(int(11), int(1), int(3), 'TRANSFER', { amount: 12.5, id: 't-1' }, '5:db:11', '4:db:1', '4:db:3');
const owns = new Relationship(int(12), int(3), int(7), 'HAS_PHONE', { since: int(2020) }, '5:db:12', '4:db:3', '4:db:7');

describe('Bolt values in LKE shapes', () => {
  it('turns a Node into an LKE node: elementId as id, labels as categories, integers as numbers', () => {
    const value = boltValue(alice, READ_AT);
    expect(value).toBeInstanceOf(NodeValue);
    expect((value as NodeValue).node).toEqual({
      id: '4:db:1',
      data: { categories: ['Client', 'Person'], properties: { id: 'alice', score: 42, born: '1990-04-01' }, readAt: READ_AT, isVirtual: false, geo: {} },
    });
  });

  it('turns a Relationship into an LKE edge whose ends are the elementIds of its nodes, beside data and in it', () => {
    const value = boltValue(transfer, READ_AT);
    expect(value).toBeInstanceOf(EdgeValue);
    expect((value as EdgeValue).edge).toEqual({
      id: '5:db:11',
      source: '4:db:1',
      target: '4:db:3',
      data: { type: 'TRANSFER', source: '4:db:1', target: '4:db:3', properties: { amount: 12.5, id: 't-1' }, readAt: READ_AT, isVirtual: false },
    });
  });

  it('turns a Path into its nodes and edges in order, and a subgraph holds each once', () => {
    const path = new Path(alice, phone, [new PathSegment(alice, transfer, carol), new PathSegment(carol, owns, phone)]);
    const value = boltValue(path, READ_AT);
    expect(value).toBeInstanceOf(PathValue);
    const { nodes, edges } = (value as PathValue).path;
    expect(nodes.map((n) => n.id)).toEqual(['4:db:1', '4:db:3', '4:db:7']);
    expect(edges.map((e) => [e.id, e.source, e.target])).toEqual([
      ['5:db:11', '4:db:1', '4:db:3'],
      ['5:db:12', '4:db:3', '4:db:7'],
    ]);
    const subgraph = new Subgraph();
    subgraph.addRow({ p: value, a: boltValue(alice, READ_AT), both: boltValue([alice, carol], READ_AT) });
    expect([...subgraph.nodes.keys()]).toEqual(['4:db:1', '4:db:3', '4:db:7']);
    expect(subgraph.edges.size).toBe(2);
  });

  it('maps lists of graph items item by item, and maps of values key by key', () => {
    const list = boltValue([alice, transfer, [carol]], READ_AT) as unknown[];
    expect(list[0]).toBeInstanceOf(NodeValue);
    expect(list[1]).toBeInstanceOf(EdgeValue);
    expect((list[2] as unknown[])[0]).toBeInstanceOf(NodeValue);
    expect(boltValue({ count: int(3), names: ['a', 'b'], nested: { big: int('9007199254740993') } }, READ_AT)).toEqual({
      count: 3,
      names: ['a', 'b'],
      nested: { big: '9007199254740993' },
    });
  });

  it('keeps integers in the safe range as numbers and gives the others as exact text', () => {
    expect(boltValue(int(0), READ_AT)).toBe(0);
    expect(boltValue(int(-42), READ_AT)).toBe(-42);
    expect(boltValue(int(Number.MAX_SAFE_INTEGER), READ_AT)).toBe(Number.MAX_SAFE_INTEGER);
    expect(boltValue(int('9007199254740993'), READ_AT)).toBe('9007199254740993');
    expect(boltValue(int('-9223372036854775808'), READ_AT)).toBe('-9223372036854775808');
    expect(boltValue(9007199254740993n, READ_AT)).toBe('9007199254740993');
    expect(boltValue(12n, READ_AT)).toBe(12);
  });

  it('gives temporal values as their ISO text', () => {
    expect(boltValue(new BoltDate(int(2024), int(2), int(29)), READ_AT)).toBe('2024-02-29');
    expect(boltValue(new DateTime(int(2024), int(2), int(29), int(13), int(5), int(7), int(123000000), int(3600)), READ_AT)).toBe('2024-02-29T13:05:07.123000000+01:00');
    expect(boltValue(new DateTime(int(2024), int(2), int(29), int(13), int(5), int(7), int(0), undefined, 'Europe/Paris'), READ_AT)).toBe('2024-02-29T13:05:07[Europe/Paris]');
    expect(boltValue(new LocalDateTime(int(2024), int(2), int(29), int(13), int(5), int(7), int(0)), READ_AT)).toBe('2024-02-29T13:05:07');
    expect(boltValue(new Time(int(13), int(5), int(7), int(0), int(-7200)), READ_AT)).toBe('13:05:07-02:00');
    expect(boltValue(new LocalTime(int(13), int(5), int(7), int(500000000)), READ_AT)).toBe('13:05:07.500000000');
    expect(boltValue(new Duration(int(14), int(3), int(7), int(0)), READ_AT)).toBe('P1Y2M3DT7S');
  });

  it('gives points as maps of their reference system and coordinates', () => {
    expect(boltValue(new Point(int(4326), 2.35, 48.85), READ_AT)).toEqual({ srid: 4326, x: 2.35, y: 48.85 });
    expect(boltValue(new Point(int(9157), 1, 2, 3), READ_AT)).toEqual({ srid: 9157, x: 1, y: 2, z: 3 });
  });

  it('gives nulls, bytes, vectors and UUIDs as JSON values', () => {
    expect(boltValue(null, READ_AT)).toBeNull();
    expect(boltValue(undefined, READ_AT)).toBeNull();
    expect(boltValue(new Uint8Array([1, 2, 255]), READ_AT)).toBe('AQL/');
    expect(boltValue(neo4j.vector(new Float64Array([0.5, 1.5])), READ_AT)).toEqual([0.5, 1.5]);
    expect(boltValue(neo4j.uuid('c3e4a6f2-8d2b-4b1e-9a53-2f1c9a3d7e10'), READ_AT)).toBe('c3e4a6f2-8d2b-4b1e-9a53-2f1c9a3d7e10');
  });
});

describe('Bolt rows', () => {
  const columns = ['a', 'text'];
  const record = (text: string) => new neo4j.Record(columns, [alice, text]);

  it('takes a row up to 16 MB, as the embedded engine does', () => {
    const row = boltRow(record('x'.repeat(15 * 1024 * 1024)), columns, 1, READ_AT, false);
    expect(row.a).toBeInstanceOf(NodeValue);
    expect((row.text as string).length).toBe(15 * 1024 * 1024);
  });

  it('refuses a row over 16 MB with bad_graph_request naming the row', () => {
    const refusal = (() => {
      try {
        boltRow(record('x'.repeat(17 * 1024 * 1024)), columns, 3, READ_AT, false);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(GraphError);
    expect(refusal).toMatchObject({ key: 'bad_graph_request', message: 'row 3 of the answer holds about 17 MB, over the 16 MB a row may hold: return fewer or smaller values' });
  });

  it('counts what lists and maps hold: 20 strings of 1 MB in a list are over 16 MB too', () => {
    const list = Array.from({ length: 20 }, () => 'y'.repeat(1024 * 1024));
    expect(() => boltRow(new neo4j.Record(['list'], [{ list }]), ['list'], 1, READ_AT, false)).toThrow(/^row 1 of the answer holds about 20 MB/);
  });
});

describe('Bolt errors as the API names them', () => {
  const label = 'data source "fraud"';
  const serverError = (code: string, message: string) => new Neo4jError(message, code, 'N/A', 'N/A');
  const cases: [string, unknown, string, RegExp][] = [
    ['a refused password', serverError('Neo.ClientError.Security.Unauthorized', 'The client is unauthorized due to authentication failure.'), 'data_source_unavailable', /refused the credentials: authentication failed/],
    ['expired credentials', serverError('Neo.ClientError.Security.CredentialsExpired', 'The credentials have expired'), 'data_source_unavailable', /refused the credentials/],
    ['a write by a reader', serverError('Neo.ClientError.Security.Forbidden', 'Write operations are not allowed for user reader'), 'write_forbidden', /may not write/],
    ['a database it may not use', serverError('Neo.ClientError.Security.Forbidden', 'Database access is not allowed for user reader'), 'data_source_unavailable', /refused access/],
    ['an unknown database', serverError('Neo.ClientError.Database.DatabaseNotFound', 'Graph not found: nope'), 'data_source_unavailable', /no such database: Graph not found: nope/],
    ['a transaction past its time-out', serverError('Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration', 'The transaction has been terminated'), 'graph_request_timeout', /time-out/],
    ['Memgraph\'s time-out', serverError('Memgraph.TransientError.MemgraphError.MemgraphError', 'Transaction was asked to abort because of transaction timeout.'), 'graph_request_timeout', /time-out/],
    ['a write in a READ transaction', serverError('Neo.ClientError.Statement.AccessMode', 'Writing in read access mode not allowed.'), 'write_forbidden', /only read queries/],
    ['a syntax error', serverError('Neo.ClientError.Statement.SyntaxError', "Invalid input 'MATC'"), 'bad_graph_request', /^Invalid input 'MATC'$/],
    ['Memgraph\'s syntax error', serverError('Memgraph.ClientError.MemgraphError.MemgraphError', 'line 1:1 mismatched input'), 'bad_graph_request', /^line 1:1 mismatched input$/],
    ['a server out of reach', serverError('ServiceUnavailable', 'Could not perform discovery. No routing servers available.'), 'data_source_unavailable', /^the graph of data source "fraud" is unreachable: no Bolt server answered at its URL/],
    ['a session gone', serverError('SessionExpired', 'The session has expired'), 'data_source_unavailable', /is unreachable/],
    ['a server\'s failure', serverError('Neo.TransientError.General.DatabaseUnavailable', 'The database is not available'), 'data_source_unavailable', /data source "fraud" failed: The database is not available/],
  ];
  it.each(cases)('answers %s with its key and a message that says what to check', (_, err, key, message) => {
    const mapped = boltError(err, label);
    expect(mapped).toBeInstanceOf(GraphError);
    expect(mapped.key).toBe(key);
    expect(mapped.message).toMatch(message);
  });
});

describe('a Bolt server out of reach', () => {
  // Issue 44, item 10: the answer told a closed port, an HTTP server, another protocol's banner and a silent port apart.
  it('answers one message whatever kept it out of reach, and hands the reason to the log only', () => {
    const failures = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7687'), { code: 'ServiceUnavailable' }),
      Object.assign(new Error('Unknown Bolt protocol version: 45.72'), { code: 'ProtocolError' }),
      Object.assign(new Error('Connection acquisition timed out in 10000 ms.'), { code: 'N/A' }),
      new Error('Failed to establish connection in 10000ms'),
      new Error('blocked by receiver policy: 169.254.169.254 (169.254.0.0/16 link-local)'),
      new Error('something odd'),
    ];
    const logged: string[] = [];
    const answers = failures.map((err) => boltError(err, 'data source "fraud"', (reason) => logged.push(reason)));
    for (const answer of answers) expect(answer).toMatchObject({ key: 'data_source_unavailable', message: unreachableMessage('data source "fraud"') });
    expect(logged).toEqual(failures.map((err) => err.message));
  });
});
