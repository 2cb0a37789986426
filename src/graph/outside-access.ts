/**
 * Queries that reach outside the graph: the files and the network of the machine the engine runs on.
 *
 * The query API and alerts read and write graph data, nothing else. Kùzu's read-only transaction stops writes to the
 * graph, but not `LOAD FROM '/any/file'` (a read: an Analyst's alert preview answered the secrets keyring's line),
 * `COPY (…) TO '/any/file'` or `EXPORT DATABASE` (writes to the service's file system), nor `ATTACH`, `INSTALL` and
 * `LOAD EXTENSION`. An Admin's write query may not do them either: they reach files the service keeps from every
 * caller (the keyring, the database), and the CLI's `graph load` is the way to load files. On Neo4j and Memgraph,
 * `LOAD CSV` reads the server's files and fetches URLs from it, and APOC's load, import, export and dynamic Cypher
 * procedures do the same or hide a query in a string; what the server allows is its own configuration, so these are
 * refused here too, and the docs say to give the service a user with least rights.
 *
 * The check reads the query's words outside comments, string literals and backquoted names, so a keyword in a
 * property value or a name does not count, and one hidden in a comment cannot slip through by spacing.
 */

export type OutsideAccessVendor = 'embedded' | 'neo4j';

/** Statements that touch files, extensions or other databases when they are the query's statement. */
const EMBEDDED_STATEMENTS = new Set(['COPY', 'EXPORT', 'IMPORT', 'ATTACH', 'DETACH', 'INSTALL', 'UNINSTALL', 'USE', 'LOAD']);
/**
 * Kùzu's table functions that read files, which `LOAD FROM` and `COPY` use and a `CALL` reaches as well; called on
 * their own (`CALL READ_CSV_SERIAL('/etc/hostname') RETURN *`), each crashed Kùzu 0.11.3's process here.
 */
const EMBEDDED_FILE_FUNCTIONS = /^(READ_CSV_SERIAL|READ_CSV_PARALLEL|READ_PARQUET|READ_NPY|JSON_SCAN|FILE_INFO|_CACHE_ARRAY_COLUMN_LOCALLY)$/i;
const APOC_OUTSIDE = /^apoc\.(load|import|export|cypher|periodic|do|systemdb|trigger|custom|log|util\.(sleep|validate)|when|case|graph\.from(cypher|document))\b/i;
/** Memgraph's MAGE procedures that read files or URLs, write files, or reach other databases. */
const MAGE_OUTSIDE = /^(json_util\.load_from|import_util\.|export_util\.|migrate\.)/i;
/** `LOAD <format>` clauses: Neo4j's CSV, Memgraph's CSV, Parquet and JSON lines. */
const BOLT_LOADS = new Set(['CSV', 'PARQUET', 'JSONL', 'JSON']);

/** Where the comment that starts at `i` ends (a line comment at its newline), or undefined when none starts there. */
function afterComment(query: string, i: number): number | undefined {
  if (query[i] !== '/') return undefined;
  if (query[i + 1] === '/') {
    const newline = query.indexOf('\n', i + 2);
    return newline < 0 ? query.length : newline;
  }
  if (query[i + 1] !== '*') return undefined;
  const close = query.indexOf('*/', i + 2);
  return close < 0 ? query.length : close + 2;
}

/** Past the string or backquoted name that opens at `i` (a backslash escapes in strings only); an unclosed one runs to the end. */
function afterQuoted(query: string, i: number): number {
  const quote = query[i];
  let j = i + 1;
  while (j < query.length && query[j] !== quote) j += query[j] === '\\' && quote !== '`' ? 2 : 1;
  return j + 1;
}

/** The query's words, in order: keywords and names, with `.`-joined names kept whole (`apoc.load.json`). */
export function queryWords(query: string): string[] {
  const words: string[] = [];
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    const comment = afterComment(query, i);
    if (comment !== undefined) {
      i = comment;
    } else if (c === "'" || c === '"' || c === '`') {
      i = afterQuoted(query, i);
      // A backquoted name stands for a name: keep its place so `a.`x`` does not join the next word.
      if (c === '`') words.push('`');
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_.]/.test(query[j]!)) j++;
      // A label or relationship type (`(n:Load)`) is a name, never a keyword.
      let before = i - 1;
      while (before >= 0 && /\s/.test(query[before]!)) before--;
      words.push(query[before] === ':' ? `:${query.slice(i, j)}` : query.slice(i, j));
      i = j;
    } else {
      i++;
    }
  }
  return words;
}

/**
 * The names the query calls or refers to, whole: the parts of a dotted name joined however written (backquoted
 * `` `apoc`.`load`.`json` ``, spaced `apoc . load . json`, with comments between), a backquoted part unquoted. Labels
 * and relationship types (after `:`) are left out. For the checks of functions and procedures by name, which a
 * backquoted or spaced name got past when names were read as words (`CALL \`READ_CSV_SERIAL\`('/x')` crashed the
 * Kùzu process).
 */
export function queryNames(query: string): string[] {
  const names: string[] = [];
  let parts: string[] | undefined;
  let afterDot = false;
  let label = false;
  let lastCode = '';
  const end = () => {
    if (parts && !label) names.push(parts.join('.'));
    parts = undefined;
    afterDot = false;
  };
  const part = (text: string) => {
    if (parts && afterDot) parts.push(text);
    else {
      end();
      label = lastCode === ':';
      parts = [text];
    }
    afterDot = false;
    lastCode = 'a';
  };
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    const comment = afterComment(query, i);
    if (comment !== undefined) {
      i = comment;
    } else if (c === "'" || c === '"') {
      end();
      i = afterQuoted(query, i);
      lastCode = c;
    } else if (c === '`') {
      // A backquote inside a backquoted name is written twice.
      let text = '';
      i++;
      while (i < n) {
        if (query[i] === '`' && query[i + 1] === '`') {
          text += '`';
          i += 2;
        } else if (query[i] === '`') break;
        else text += query[i++];
      }
      i++;
      part(text);
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(query[j]!)) j++;
      part(query.slice(i, j));
      i = j;
    } else if (c === '.' && parts) {
      afterDot = true;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      end();
      lastCode = c;
      i++;
    }
  }
  end();
  return names;
}

/**
 * Whether the query is a setting (`CALL threads = 64`): no write, but it would stay on the pooled connection, or
 * apply to the whole database, for every later query. Read past comments, so one written before it does not hide it.
 */
export function isSetting(query: string): boolean {
  const code = codeOf(query);
  return /^\s*CALL\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*)\s*=/i.test(code);
}

/** The query with its comments taken out (each a space), strings and names kept as they are. */
function codeOf(query: string): string {
  const pieces: string[] = [];
  let from = 0;
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    const comment = afterComment(query, i);
    if (comment !== undefined) {
      pieces.push(query.slice(from, i), ' ');
      i = from = comment;
    } else if (c === "'" || c === '"' || c === '`') {
      i = afterQuoted(query, i);
    } else {
      i++;
    }
  }
  pieces.push(query.slice(from));
  return pieces.join('');
}

/**
 * Why `query` reaches outside the graph, as a message for its caller, or undefined when it does not. The message
 * names the clause; it never echoes a path.
 */
export function outsideAccess(query: string, vendor: OutsideAccessVendor): string | undefined {
  const words = queryWords(query);
  const upper = words.map((w) => w.toUpperCase());
  const names = queryNames(query);
  if (vendor === 'embedded') {
    let first = 0;
    while (upper[first] === 'EXPLAIN' || upper[first] === 'PROFILE') first++;
    const statement = upper[first];
    if (statement !== undefined && EMBEDDED_STATEMENTS.has(statement)) return refusal(statement === 'LOAD' ? `LOAD ${upper[first + 1] ?? ''}`.trim() : statement);
    for (let k = 0; k < upper.length; k++) {
      if (upper[k] === 'LOAD' && (upper[k + 1] === 'FROM' || upper[k + 1] === 'WITH')) return refusal('LOAD FROM');
    }
    const file = names.find((name) => EMBEDDED_FILE_FUNCTIONS.test(name));
    return file === undefined ? undefined : refusal(file.toUpperCase());
  }
  for (let k = 0; k < upper.length; k++) {
    if (upper[k] === 'LOAD' && BOLT_LOADS.has(upper[k + 1] ?? '')) return refusal(`LOAD ${upper[k + 1]}`);
  }
  const procedure = names.find((name) => APOC_OUTSIDE.test(name) || MAGE_OUTSIDE.test(name));
  return procedure === undefined ? undefined : refusal(procedure.split('.').slice(0, 2).join('.'));
}

function refusal(clause: string): string {
  return `this query uses ${clause}, which reaches files, extensions or other databases outside the graph: queries here read and write the graph only (load files into an embedded graph with \`alert-webhooks graph load\`)`;
}
