/**
 * Inside the Kùzu process: what a query does, as Kùzu itself plans it, judged against the allow-list
 * (../query-allow-list.ts) before the query runs.
 *
 * Kùzu answers `EXPLAIN <query>` with its physical plan drawn as text boxes (main/plan_printer.cpp): each box's
 * first line is its operator, `NAME[id]`, alone between the box's frame, and a table function's or a setting's box
 * has a `Function: NAME` line. That drawing is the only form of the plan the Node.js API gives. It is read here
 * without trusting anything a query can put in it: the text a query controls (names, literals, expressions) is
 * drawn on other lines of the boxes, and at worst it adds lines that look like operators or functions, which only
 * adds names to check: an unknown name refuses the query, a listed one admits nothing that was not there. An
 * operator's own line cannot be hidden or altered by them, and a plan whose call operators outnumber the function
 * lines read is refused. The same prepared EXPLAIN is executed with the run's own parameters, in the run's own
 * transaction, and it is one statement: Kùzu's prepare refuses several.
 */
import type { Connection, KuzuValue } from 'kuzu';
import { EMBEDDED_READ_OPERATORS, EMBEDDED_TABLE_FUNCTIONS, EMBEDDED_WRITE_OPERATORS, isEmbeddedWrite } from '../query-allow-list.js';
import type { ErrorKind } from './kuzu-protocol.js';

/** A query the plan check refused: `kind` is the API's error key. */
export class QueryRefused extends Error {
  override name = 'QueryRefused';
  constructor(
    readonly kind: Extract<ErrorKind, 'bad_graph_request' | 'write_forbidden'>,
    message: string,
  ) {
    super(message);
  }
}

export interface KuzuPlan {
  /** The operators' names (PhysicalOperatorUtils::operatorTypeToString), once each per box. */
  operators: string[];
  /** The `Function:` of table-function and standalone-call boxes. */
  functions: string[];
}

/**
 * Whether the plan walks relationships recursively (variable-length and shortest paths), whose relationships Kùzu
 * may answer with their ends swapped (Catalogue.storedEnds).
 */
export function isRecursive(plan: KuzuPlan): boolean {
  return plan.operators.includes('RECURSIVE_EXTEND');
}

// A box's first line: the frame, at least one space, NAME[id], at least one space, the frame.
const OPERATOR_LINE = /│ +([A-Z_]+)\[\d+\] +│/g;
// A param line of a call's box.
const FUNCTION_LINE = /│ +Function: ([^\s│]+) +│/g;
const CALL_OPERATORS = new Set(['TABLE_FUNCTION_CALL', 'STANDALONE_CALL']);

/** Reads the operators and functions out of Kùzu's EXPLAIN text; throws when it is not a physical plan read whole. */
export function readPlan(text: string): KuzuPlan {
  // EXPLAIN LOGICAL draws a logical plan, whose boxes are other operators: a query opening with LOGICAL is refused.
  if (!/^[┌─┐\n]*│┌─*┐│\n││ *Physical Plan *││/.test(text)) throw new QueryRefused('bad_graph_request', 'the query could not be planned as one query of the graph');
  const operators = [...text.matchAll(OPERATOR_LINE)].map((m) => m[1]!);
  const functions = [...text.matchAll(FUNCTION_LINE)].map((m) => m[1]!.toUpperCase());
  const calls = operators.filter((op) => CALL_OPERATORS.has(op)).length;
  if (operators.length === 0 || functions.length < calls) throw new QueryRefused('bad_graph_request', 'the query’s plan could not be read whole, so it is not run');
  return { operators, functions };
}

/**
 * Why the plan may not run, or undefined when every operator and function is on the list. A read-only run that
 * plans a write is refused `write_forbidden` (an Admin's query may then run again as a write); anything off the
 * lists is `bad_graph_request`, naming the operator or function, for everyone.
 */
export function planRefusal(plan: KuzuPlan, readOnly: boolean): QueryRefused | undefined {
  const off = plan.operators.find((op) => !EMBEDDED_READ_OPERATORS.has(op) && !EMBEDDED_WRITE_OPERATORS.has(op));
  if (off !== undefined) return new QueryRefused('bad_graph_request', refusedOperator(off));
  const fn = plan.functions.find((name) => !EMBEDDED_TABLE_FUNCTIONS.has(name));
  if (fn !== undefined) return new QueryRefused('bad_graph_request', `this query calls ${fn}, which is not one of the functions a query here may call (they read the graph only): ${[...EMBEDDED_TABLE_FUNCTIONS.keys()].filter((f) => f !== 'READ_FTABLE').join(', ')}`);
  const write = plan.operators.find(isEmbeddedWrite);
  if (readOnly && write !== undefined) return new QueryRefused('write_forbidden', `this query writes to the graph (${write}): it may not run read-only`);
  return undefined;
}

function refusedOperator(op: string): string {
  const what: Record<string, string> = {
    COPY_TO: 'COPY … TO, which writes a file',
    BATCH_INSERT: 'COPY … FROM, which reads a file (load files with `alert-webhooks graph load`)',
    PARTITIONER: 'COPY … FROM, which reads a file (load files with `alert-webhooks graph load`)',
    EXPORT_DATABASE: 'EXPORT DATABASE, which writes files',
    IMPORT_DATABASE: 'IMPORT DATABASE, which reads files',
    ATTACH_DATABASE: 'ATTACH, which opens another database',
    DETACH_DATABASE: 'DETACH, which closes another database',
    USE_DATABASE: 'USE, which changes the database of the connection',
    INSTALL_EXTENSION: 'INSTALL, which installs an extension',
    UNINSTALL_EXTENSION: 'UNINSTALL, which removes an extension',
    LOAD_EXTENSION: 'LOAD EXTENSION, which loads code into the engine',
    STANDALONE_CALL: 'CALL <setting> = …, which changes a setting of the engine for every later query',
    TRANSACTION: 'a transaction statement (BEGIN, COMMIT, ROLLBACK, CHECKPOINT): the service runs each query in its own transaction',
    CREATE_MACRO: 'CREATE MACRO, which stores a macro for every user',
    PROFILE: 'PROFILE',
  };
  return `this query uses ${what[op] ?? op}: queries here read the graph (and an Admin's, on a graph that allows writes, write it), nothing else`;
}

/**
 * Plans `query` with its parameters on `conn` (in the transaction the run opened) and throws a QueryRefused unless
 * the plan is on the lists; answers the plan. What Kùzu cannot plan is refused.
 */
export async function checkPlan(conn: Connection, query: string, params: Record<string, KuzuValue>, readOnly: boolean): Promise<KuzuPlan> {
  // A newline, not a space: the query's first line may end in a `//` comment, which must not swallow the word.
  const explain = await conn.prepare(`EXPLAIN\n${query}`);
  // The query itself prepared (kuzu-process.ts prepares it first): only an EXPLAIN or PROFILE of its own fails here.
  if (!explain.isSuccess()) throw new QueryRefused('bad_graph_request', 'the query could not be planned as one query of the graph (EXPLAIN and PROFILE are not run here): queries here read the graph, and an Admin’s may write it');
  const result = await conn.execute(explain, params);
  const single = Array.isArray(result) ? result[0]! : result;
  const rows = await single.getAll();
  single.close();
  const text = rows.map((row) => String(Object.values(row)[0] ?? '')).join('\n');
  const plan = readPlan(text);
  const refusal = planRefusal(plan, readOnly);
  if (refusal) throw refusal;
  return plan;
}

/**
 * Kùzu 0.11.3's file-reading table functions crash its process when a query calls them directly, as early as the
 * prepare (`CALL READ_CSV_SERIAL('/x') RETURN *`: a segmentation fault), which would end every other query of the
 * graph. A query whose text names one anywhere, in any case, is refused before Kùzu reads it. This pass only
 * refuses: its names are never what admits a query (the plan is), and a spelling it misses is a crash, not a read.
 */
const CRASHING_FUNCTIONS = /READ_CSV_SERIAL|READ_CSV_PARALLEL|READ_PARQUET|READ_NPY|JSON_SCAN|FILE_INFO|_CACHE_ARRAY_COLUMN_LOCALLY/i;

export function refuseCrashers(query: string): void {
  const named = CRASHING_FUNCTIONS.exec(query);
  if (named) throw new QueryRefused('bad_graph_request', `this query names ${named[0].toUpperCase()}, a function that reads files: queries here read the graph only (load files with \`alert-webhooks graph load\`)`);
}
