/**
 * What a query does, as the Bolt server itself plans it: the server's answer to `EXPLAIN <query>`, read against
 * the lists of query-allow-list.ts. Pure functions over what the driver gives back, so each rule is tested on the
 * driver's own classes without a server (test/graph/bolt-plan.test.ts).
 *
 * Neo4j answers a structured plan (ResultSummary.plan: operators, their `Details`, their children) and the query
 * type; Memgraph answers no plan there but rows of text in one "QUERY PLAN" column (` * ScanAll (n)`), and "rw" as
 * the query type of every EXPLAIN. The answer's shape says which one it is: the server's agent string does not
 * (Memgraph introduces itself as "Neo4j/v5.11.0 compatible graph database server - Memgraph", and may be renamed).
 */
import type { Plan, ResultSummary } from 'neo4j-driver';
import { GraphError } from '../graph-source.js';
import {
  BOLT_MEMGRAPH_READ_OPERATORS,
  BOLT_MEMGRAPH_WRITE_OPERATORS,
  BOLT_NEO4J_FUNCTIONS,
  BOLT_NEO4J_READ_OPERATORS,
  BOLT_NEO4J_WRITE_OPERATORS,
  BOLT_PROCEDURES,
  BOLT_REFUSED_OPERATORS,
} from '../query-allow-list.js';

export interface PlanReadingOptions {
  /** A read-only run: a write is refused with `write_forbidden` (an Admin may run it again as a write). */
  readOnly: boolean;
}

/** The column of Memgraph's EXPLAIN answer. */
export const MEMGRAPH_PLAN_COLUMN = 'QUERY PLAN';

/** What the driver answers for `EXPLAIN <query>`, read eagerly: its summary, and its rows' column and values. */
export interface ExplainAnswer {
  summary: Pick<ResultSummary, 'queryType' | 'plan'>;
  keys: readonly string[];
  /** The values of the first column, one per row. */
  firstColumn: readonly unknown[];
}

/** Which server planned the query, by the shape of its answer; undefined when it is neither shape. */
export function planKind(answer: ExplainAnswer): 'neo4j' | 'memgraph' | undefined {
  if (answer.summary.plan) return 'neo4j';
  if (answer.keys.length === 1 && answer.keys[0] === MEMGRAPH_PLAN_COLUMN) return 'memgraph';
  return undefined;
}

/** The refusal of the server's EXPLAIN answer, or undefined when the query may run. */
export function explainRefusal(answer: ExplainAnswer, options: PlanReadingOptions): GraphError | undefined {
  switch (planKind(answer)) {
    case 'neo4j':
      return boltPlanRefusal(answer.summary, options);
    case 'memgraph':
      return memgraphPlanRefusal(answer.firstColumn, options);
    default:
      return refused('the server answered no plan for this query, so what it would do cannot be checked');
  }
}

/** Neo4j's query types (ResultSummary.queryType) that a run which may write accepts; "s" (schema) never runs. */
const NEO4J_QUERY_TYPES = new Set(['r', 'rw', 'w']);

/** Neo4j: the refusal of a structured plan (EXPLAIN's ResultSummary), or undefined when the query may run. */
export function boltPlanRefusal(summary: Pick<ResultSummary, 'queryType' | 'plan'>, options: PlanReadingOptions): GraphError | undefined {
  if (!summary.plan) return refused('the server answered no plan for this query, so what it would do cannot be checked');
  if (summary.queryType === 's') {
    return refused('schema and administration statements (indexes, constraints, users, databases) do not run here: use the server’s own tools');
  }
  if (!NEO4J_QUERY_TYPES.has(summary.queryType)) return refused(`the server gave this query an unknown query type "${summary.queryType}"`);
  const writes = new Set<string>();
  for (const operator of planOperators(summary.plan)) {
    const name = operatorName(operator.operatorType);
    if (name === 'ProcedureCall') {
      const procedure = procedureName(operator.arguments);
      if (!procedure || !BOLT_PROCEDURES.has(procedure)) {
        return refused(`the procedure ${procedure ?? '(unnamed)'} may not be called here; the procedures a query may call are ${[...BOLT_PROCEDURES.keys()].join(', ')}`);
      }
    } else if (BOLT_NEO4J_WRITE_OPERATORS.has(name)) {
      writes.add(name);
    } else if (!BOLT_NEO4J_READ_OPERATORS.has(name)) {
      return refused(operatorRefusal(name));
    }
    const fn = unlistedFunction(operator.arguments, name === 'ProcedureCall');
    if (fn) return refused(`the function ${fn} may not be called here: only Neo4j's own functions may (${fn.split('.')[0]}.* functions are code the server's plan cannot see into)`);
  }
  if (options.readOnly && (summary.queryType !== 'r' || writes.size > 0)) {
    const what = writes.size > 0 ? `: ${[...writes].join(', ')}` : '';
    return new GraphError('write_forbidden', `this query writes (query type "${summary.queryType}"${what}): only read queries may run here`);
  }
  return undefined;
}

/**
 * Memgraph: the refusal of a plan answered as lines of text, or undefined when the query may run. Each operator is
 * one line, `* Name …` after the `| ` marks of its branch's depth; a branch opens with a `|\ Name` line. Only a
 * line's first word counts: what follows it (labels, properties, symbols the query named) cannot hide the
 * operator of a line, and a name smuggled onto a line of its own is refused unless listed.
 */
export function memgraphPlanRefusal(lines: readonly unknown[], options: PlanReadingOptions): GraphError | undefined {
  if (lines.length === 0) return refused('the server answered an empty plan for this query, so what it would do cannot be checked');
  const writes = new Set<string>();
  for (const value of lines) {
    if (typeof value !== 'string') return refused('the server answered a plan the service cannot read');
    for (const line of value.split(/\r\n|\r|\n/)) {
      const name = memgraphOperator(line);
      if (name === null) continue;
      if (name === undefined) return refused(`the server answered a plan line the service cannot read: ${JSON.stringify(line.trim().slice(0, 80))}`);
      if (BOLT_MEMGRAPH_WRITE_OPERATORS.has(name)) writes.add(name);
      else if (!BOLT_MEMGRAPH_READ_OPERATORS.has(name)) return refused(operatorRefusal(name));
    }
  }
  if (options.readOnly && writes.size > 0) {
    return new GraphError('write_forbidden', `this query writes (${[...writes].join(', ')}): only read queries may run here`);
  }
  return undefined;
}

/** A Memgraph plan line's operator: its name, null for a blank line or a branch's heading, undefined when unreadable. */
export function memgraphOperator(line: string): string | null | undefined {
  const rest = line.replace(/^[\s|]+/, '');
  if (rest === '' || rest.startsWith('\\')) return null;
  return /^\*\s*([A-Za-z][A-Za-z0-9_]*)/.exec(rest)?.[1];
}

/** Every operator of a plan, its root first. */
export function planOperators(plan: Plan): Plan[] {
  const operators: Plan[] = [];
  const pending: Plan[] = [plan];
  for (let next = pending.pop(); next; next = pending.pop()) {
    operators.push(next);
    pending.push(...(next.children ?? []));
  }
  return operators;
}

/** An operator's name without Neo4j 5's runtime suffix: "ProduceResults@neo4j" is ProduceResults. */
export function operatorName(operatorType: string): string {
  const at = operatorType.indexOf('@');
  return at < 0 ? operatorType : operatorType.slice(0, at);
}

/** The procedure a ProcedureCall runs, from its Details: "db.labels() :: (label :: STRING)" is db.labels. */
export function procedureName(args: Plan['arguments'] | undefined): string | undefined {
  const details = args?.Details;
  if (typeof details !== 'string') return undefined;
  return /^\s*([^\s(]+)\s*\(/.exec(details)?.[1];
}

// A namespaced name followed by "(": `apoc.text.join(`, `date.truncate (`, or with backquoted parts
// (`` `apoc`.`load`.json( ``). Property access is never followed by "(" in Cypher, so every match is a call.
const NAME_PART = String.raw`(?:\x60[^\x60]*\x60|[\p{L}_][\p{L}\p{N}_$]*)`;
const NAMESPACED_CALL = new RegExp(String.raw`(?<![\p{L}\p{N}_$\x60.])(${NAME_PART}(?:\s*\.\s*${NAME_PART})+)\s*\(`, 'gu');

/**
 * The first namespaced function an operator's arguments call that is not on BOLT_NEO4J_FUNCTIONS. Every string
 * argument is read (Details holds the expressions in Neo4j 5) except the plan's rendering as a table, which repeats
 * them; a ProcedureCall's own name, at the head of its Details, is the procedure, checked against BOLT_PROCEDURES.
 */
export function unlistedFunction(args: Plan['arguments'] | undefined, isProcedureCall = false): string | undefined {
  for (const [key, value] of Object.entries(args ?? {})) {
    if (key === 'string-representation') continue;
    const texts: unknown[] = Array.isArray(value) ? value : [value];
    for (const text of texts) {
      if (typeof text !== 'string') continue;
      const body = isProcedureCall && key === 'Details' ? text.replace(/^\s*[^\s(]+\s*\(/, '(') : text;
      for (const match of body.matchAll(NAMESPACED_CALL)) {
        const name = match[1]!.replace(/\x60/g, '').replace(/\s+/g, '');
        if (!BOLT_NEO4J_FUNCTIONS.has(name.toLowerCase())) return name;
      }
    }
  }
  return undefined;
}

function operatorRefusal(name: string): string {
  const why = BOLT_REFUSED_OPERATORS.get(name);
  return why ? `${why}: the query is refused (plan operator ${name})` : `the plan operator ${name} is not one a query may use here, so the query is refused`;
}

function refused(message: string): GraphError {
  return new GraphError('bad_graph_request', message);
}
