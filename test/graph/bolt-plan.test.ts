import neo4j from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import { boltPlanRefusal, explainRefusal, memgraphOperator, memgraphPlanRefusal, operatorName, planKind, type ExplainAnswer } from '../../src/graph/bolt/bolt-plan.js';
import { GraphError } from '../../src/graph/graph-source.js';

// The driver's own ResultSummary, built as the driver builds it from a server's answer to EXPLAIN (its constructor
// takes the query, its parameters and the server's metadata): no server needed. Plans are written as Neo4j 5
// answers them, operators suffixed "@neo4j", Details holding the expressions (string literals auto-parameterized).
const { ResultSummary } = neo4j;

interface PlanSpec {
  op: string;
  details?: string;
  children?: PlanSpec[];
}

function metadataPlan({ op, details, children = [] }: PlanSpec): object {
  return { operatorType: `${op}@neo4j`, args: details === undefined ? {} : { Details: details }, identifiers: [], children: children.map(metadataPlan) };
}

function summary(query: string, type: string, root?: PlanSpec) {
  return new ResultSummary(`EXPLAIN ${query}`, {}, { type, ...(root ? { plan: metadataPlan(root) } : {}) });
}

/** A plan as a chain, its root first: each operator the only child of the one before (a PlanSpec ends it). */
function chain(...ops: (string | [string, string] | PlanSpec)[]): PlanSpec {
  const [first, ...rest] = ops;
  if (typeof first === 'object' && !Array.isArray(first)) return first;
  const [op, details] = typeof first === 'string' ? [first, undefined] : first!;
  return { op, ...(details === undefined ? {} : { details }), children: rest.length ? [chain(...rest)] : [] };
}

const READ = { readOnly: true };
const WRITE = { readOnly: false };

function expectRefusal(refusal: GraphError | undefined, key: string, message: RegExp): void {
  expect(refusal).toBeInstanceOf(GraphError);
  expect(refusal!.key).toBe(key);
  expect(refusal!.message).toMatch(message);
}

describe('Neo4j plans: the reproductions of issue 39', () => {
  it('refuses LOAD CSV hidden behind a //-comment the server ends at CR: the plan holds a LoadCSV operator', () => {
    const query = "WITH 1 AS one // x\rLOAD CSV FROM 'file:///etc/hostname' AS line RETURN line";
    const plan = chain(['ProduceResults', 'line'], ['LoadCSV', 'line'], ['Projection', '$autoint_0 AS one'], 'Argument');
    for (const options of [READ, WRITE]) expectRefusal(boltPlanRefusal(summary(query, 'r', plan), options), 'bad_graph_request', /LOAD CSV.*LoadCSV/);
  });

  it('refuses CALL apoc.\\x1cload.json(…): the plan holds a ProcedureCall naming apoc.load.json', () => {
    const query = "CALL apoc.\x1cload.json('file:///etc/hostname')";
    const plan = chain(['ProduceResults', 'value'], ['ProcedureCall', 'apoc.load.json($autostring_0) :: (value :: MAP)']);
    for (const options of [READ, WRITE]) expectRefusal(boltPlanRefusal(summary(query, 'r', plan), options), 'bad_graph_request', /procedure apoc\.load\.json may not be called/);
  });

  it('finds a refused operator anywhere in the plan, on either side of a join or an apply', () => {
    const plan: PlanSpec = {
      op: 'ProduceResults',
      details: 'n, line',
      children: [{ op: 'Apply', children: [chain(['NodeByLabelScan', 'n:Client']), chain(['LoadCSV', 'line'], 'Argument')] }],
    };
    expectRefusal(boltPlanRefusal(summary('…', 'r', plan), READ), 'bad_graph_request', /LoadCSV/);
  });
});

describe('Neo4j plans: what runs', () => {
  it('runs a read of scans, expands, filters, projections, order and limit, with Neo4j’s own namespaced functions', () => {
    const plan = chain(
      ['ProduceResults', 'c, d, m'],
      ['Top', 'm ASC LIMIT 10'],
      ['Projection', 'date.truncate($autostring_0, t.at) AS m, Point.Distance(c.home, d.home) AS km'],
      ['Filter', 't.amount > $min AND d:Client'],
      ['Expand(All)', '(c)-[t:TRANSFER]->(d)'],
      ['NodeByLabelScan', 'c:Client'],
    );
    expect(boltPlanRefusal(summary('MATCH …', 'r', plan), READ)).toBeUndefined();
  });

  it('runs the catalogue procedures on the list, and no other', () => {
    const labels = chain(['ProduceResults', 'label'], ['ProcedureCall', 'db.labels() :: (label :: STRING)']);
    expect(boltPlanRefusal(summary('CALL db.labels()', 'r', labels), READ)).toBeUndefined();
    const other = chain(['ProduceResults', 'name'], ['ProcedureCall', 'dbms.listConfig($autostring_0) :: (name :: STRING, value :: STRING)']);
    expectRefusal(boltPlanRefusal(summary('CALL dbms.listConfig()', 'r', other), READ), 'bad_graph_request', /dbms\.listConfig may not be called.*db\.labels/);
  });

  it('strips the runtime suffix from operator names', () => {
    expect(operatorName('Expand(All)@neo4j')).toBe('Expand(All)');
    expect(operatorName('ProduceResults')).toBe('ProduceResults');
  });
});

describe('Neo4j plans: functions, seen only as text in Details', () => {
  it('refuses APOC and other user-defined functions wherever their call is written', () => {
    const cases: [string, string][] = [
      ['Projection', 'apoc.text.join([$autostring_0], $autostring_1) AS x'],
      ['Filter', 'apoc.cypher.runFirstColumnSingle($autostring_0, {}) IS NOT NULL'],
      ['Projection', '`apoc`.`text`.join(n.names, $autostring_0) AS x'],
      ['Projection', 'my . plugin.fn (n) AS x'],
    ];
    for (const [op, details] of cases) {
      const refusal = boltPlanRefusal(summary('…', 'r', chain(['ProduceResults', 'x'], [op, details], 'Argument')), READ);
      expectRefusal(refusal, 'bad_graph_request', /the function \S+ may not be called/);
    }
  });

  it('refuses a function call in a procedure call’s arguments, the listed procedure’s own name aside', () => {
    const plan = chain(['ProduceResults', 'label'], ['ProcedureCall', 'db.labels(apoc.util.sleep($autoint_0)) :: (label :: STRING)']);
    expectRefusal(boltPlanRefusal(summary('…', 'r', plan), READ), 'bad_graph_request', /apoc\.util\.sleep/);
  });

  it('does not take a property access or a built-in function without a namespace for a call', () => {
    const plan = chain(['ProduceResults', 'x'], ['Projection', 'toUpper(n.name) + coalesce(n.note, $autostring_0) AS x, size(n.tags) AS y'], ['AllNodesScan', 'n']);
    expect(boltPlanRefusal(summary('…', 'r', plan), READ)).toBeUndefined();
  });
});

describe('Neo4j plans: writes', () => {
  const create = chain('ProduceResults', 'EmptyResult', ['Create', '(anon_0:Client)'], 'Argument');

  it('refuses a write in a read-only run with write_forbidden, by the query type and by the operators', () => {
    expectRefusal(boltPlanRefusal(summary("CREATE (:Client {id: 'm'})", 'w', create), READ), 'write_forbidden', /query type "w".*Create/);
    const setProperty = chain(['ProduceResults', 'c'], ['SetProperty', 'c.name = $autostring_0'], ['NodeByLabelScan', 'c:Client']);
    expectRefusal(boltPlanRefusal(summary('…', 'rw', setProperty), READ), 'write_forbidden', /SetProperty/);
    // A plan that writes is a write, whatever the query type says.
    expectRefusal(boltPlanRefusal(summary('…', 'r', setProperty), READ), 'write_forbidden', /SetProperty/);
  });

  it('runs a write in a run that may write, and still refuses LOAD CSV, unlisted procedures and IN TRANSACTIONS there', () => {
    expect(boltPlanRefusal(summary('CREATE …', 'w', create), WRITE)).toBeUndefined();
    const load = chain('ProduceResults', 'EmptyResult', ['Create', '(anon_0:Line)'], ['LoadCSV', 'line'], 'Argument');
    expectRefusal(boltPlanRefusal(summary('LOAD CSV …', 'w', load), WRITE), 'bad_graph_request', /LoadCSV/);
    const batches = chain('ProduceResults', 'EmptyResult', { op: 'TransactionForeach', children: [chain('AllNodesScan'), chain('Create', 'Argument')] });
    expectRefusal(boltPlanRefusal(summary('CALL { … } IN TRANSACTIONS', 'w', batches), WRITE), 'bad_graph_request', /IN TRANSACTIONS/);
  });

  it('refuses schema and administration statements, even in a run that may write', () => {
    const index = chain(['CreateIndex', 'RANGE INDEX FOR (:Client) ON (id)']);
    for (const options of [READ, WRITE]) expectRefusal(boltPlanRefusal(summary('CREATE INDEX …', 's', index), options), 'bad_graph_request', /schema and administration/);
    const show = chain(['ProduceResults', 'name'], ['ShowProcedures', 'proceduresForUser(all), defaultColumns']);
    expectRefusal(boltPlanRefusal(summary('SHOW PROCEDURES', 'r', show), READ), 'bad_graph_request', /ShowProcedures is not one a query may use/);
  });

  it('refuses what the server answers no plan for', () => {
    expectRefusal(boltPlanRefusal(summary('…', 'r'), READ), 'bad_graph_request', /no plan/);
  });
});

describe('Memgraph plans, answered as lines of text', () => {
  const explain = (lines: string[]): ExplainAnswer => ({ summary: summary('…', 'rw'), keys: ['QUERY PLAN'], firstColumn: lines });

  it('runs a read, and tells the server by the shape of its answer', () => {
    const answer = explain([' * Produce {n, m}', ' * Expand (n)-[anon1:KNOWS]->(m)', ' * ScanAllByLabel (n :Client)', ' * Once']);
    expect(planKind(answer)).toBe('memgraph');
    expect(explainRefusal(answer, READ)).toBeUndefined();
  });

  it('refuses LoadCsv, LoadParquet, LoadJsonl and every CallProcedure, whatever the run', () => {
    const plans = [
      [' * Produce {row}', ' * LoadCsv {row}', ' * Once'],
      [' * Produce {row}', ' * LoadParquet {row}', ' * Once'],
      ['* LoadJsonl {row}', ' * Once'],
      [' * Produce {label}', ' * CallProcedure<mg.procedures> {label}', ' * Once'],
    ];
    for (const lines of plans) {
      for (const options of [READ, WRITE]) expectRefusal(explainRefusal(explain(lines), options), 'bad_graph_request', /LOAD (CSV|PARQUET|JSONL)|procedure/);
    }
  });

  it('reads the operators of branches, and refuses a write in a read-only run', () => {
    const merge = [' * Produce {p}', ' * Accumulate', ' * Merge', ' |\\ On Match', ' | * Filter (p :Person), {p.name}', ' | * ScanAll (p)', ' | * Once', ' |\\ On Create', ' | * CreateNode', ' | * Once', ' * Once'];
    expectRefusal(memgraphPlanRefusal(merge, READ), 'write_forbidden', /Merge, CreateNode/);
    expect(memgraphPlanRefusal(merge, WRITE)).toBeUndefined();
    const hidden = [' * Produce {x}', ' * Apply', ' |\\ ', ' | * LoadCsv {row}', ' | * Once', ' * Once'];
    expectRefusal(memgraphPlanRefusal(hidden, WRITE), 'bad_graph_request', /LoadCsv/);
  });

  it('refuses an operator it does not know, a line it cannot read and an empty plan', () => {
    expectRefusal(memgraphPlanRefusal([' * Produce {n}', ' * PeriodicCommit', ' * Once'], WRITE), 'bad_graph_request', /PERIODIC COMMIT/);
    expectRefusal(memgraphPlanRefusal([' * Produce {n}', ' * Unknown operator!', ' * Once'], READ), 'bad_graph_request', /Unknown is not one/);
    expectRefusal(memgraphPlanRefusal([' * Produce {n}', 'ScanAll (n)'], READ), 'bad_graph_request', /cannot read/);
    expectRefusal(memgraphPlanRefusal([], READ), 'bad_graph_request', /empty plan/);
    expect(memgraphOperator(' | | * ScanAllByLabelProperties (n :Client {id})')).toBe('ScanAllByLabelProperties');
    expect(memgraphOperator(' |\\ On Create')).toBeNull();
  });

  it('refuses an answer that is neither a plan nor a Memgraph plan', () => {
    const answer: ExplainAnswer = { summary: summary('…', 'r'), keys: ['n'], firstColumn: [] };
    expect(planKind(answer)).toBeUndefined();
    expectRefusal(explainRefusal(answer, READ), 'bad_graph_request', /no plan/);
    const neo4jAnswer: ExplainAnswer = { summary: summary('…', 'r', chain('ProduceResults', 'AllNodesScan')), keys: [], firstColumn: [] };
    expect(planKind(neo4jAnswer)).toBe('neo4j');
    expect(explainRefusal(neo4jAnswer, READ)).toBeUndefined();
  });
});
