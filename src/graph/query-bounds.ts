/**
 * Bounds on a query's text, checked before any engine parses it: an engine's parser is not time-bounded (Kùzu parses
 * before its time-out starts, and 10 KB of nested parentheses or a 94 KB `1+1+…` held a graph for as long as the
 * service let the query live, then the hard stop killed the process and every other query of the graph with it).
 *
 * This pass reads the raw text, strings and comments included, and may only refuse, never admit: what passes is
 * still planned and judged by the engine. Counting inside strings can refuse a query whose
 * strings hold many brackets or words (their text counts as if it were code), never admit one the engine would take
 * longer over. A closing bracket inside a string lowers the depth counted, so a query built to hide its nesting
 * from this count gets through to the engine, whose time-out and hard stop still bound it: this is the quick, clear
 * refusal of the usual shapes, not the guarantee.
 *
 * The bounds, chosen from Kùzu 0.11.3's time to parse and plan (`conn.prepare('EXPLAIN ' + q)`, 2 cores), so that
 * what passes is answered within about 100 ms. Each figure is a fresh process's first parse of that shape after one
 * ordinary query (the parser learns a shape: the same text again took a fraction), but for the rows marked "median",
 * three in one process:
 *
 *   nesting of ( [ {   depth 24 / 32 / 48 / 64, in ms:  RETURN ((…1…))     20 / 27 /  51 /  85
 *                                                       RETURN [[…1…]]     31 / 48 /  91 / 149
 *                                                       {a: {a: …1…}}      37 / 58 / 148 / 252
 *                                                       abs(abs(…1…))      30 / 39 /  66 /  97
 *                                                       [({a: …1…})]       86 / 95 / 177 / 232
 *                                                       [x IN [x IN …]]    77 / 104 / 166 / 234
 *                                                       (a 128-deep list took 434 ms, 256 deep 2.3 s)
 *   nesting of CASE     depth 8 / 10 / 12 / 14 / 16:     30 / 34 / 69 / 115 / 253 (20 deep: 4.8 s; it doubles every
 *                       two levels). CASE and brackets alternating, 24 deep (12 CASE): 77 ms; 28 deep (14 CASE): 140 ms.
 *   tokens              2,000 / 2,500 / 3,000:          1+1+… (quadratic)       71 / 97 / 138 (4,000: 209, median;
 *                                                                               32,000: Kùzu's process crashed)
 *                                                       MATCH (a0:C), (a1:C), …  2,405 tokens: 97 ms
 *                                                       … AND … chain            4,000: 48 ms, median
 *                                                       [1, 2, …] list           4,000: 36 ms, median
 *   length              100,000 characters of a string, a comment or spaces: 2-3 ms (1,000,000: 20-32 ms).
 */
import { GraphError } from './graph-source.js';

/** Characters: the API's own bound on a query field (MAX_QUERY_LENGTH), held here for every caller (stored alerts too). */
export const MAX_QUERY_CHARACTERS = 100_000;
/** Brackets ( [ { and CASE…END inside one another. */
export const MAX_QUERY_DEPTH = 32;
/** CASE…END inside one another: the engine's parser is exponential in it. */
export const MAX_CASE_DEPTH = 12;
/** Word runs (letters, digits, _) and punctuation characters, each one token; ASCII spaces separate and do not count. */
export const MAX_QUERY_TOKENS = 2_500;

const count = (n: number) => n.toLocaleString('en-US');

/** Throws a GraphError (bad_graph_request) naming the first bound the query's text exceeds. */
export function checkQueryBounds(query: string): void {
  if (query.length > MAX_QUERY_CHARACTERS) {
    throw new GraphError('bad_graph_request', `the query is ${count(query.length)} characters long, over the ${count(MAX_QUERY_CHARACTERS)} a query may hold: shorten it`);
  }
  const { depth, caseDepth, tokens } = measureQuery(query);
  if (depth > MAX_QUERY_DEPTH) {
    throw new GraphError('bad_graph_request', `the query is nested ${count(depth)} deep, over the ${MAX_QUERY_DEPTH} a query may nest: take out parentheses, brackets, braces or CASE expressions held inside one another (counted in strings too)`);
  }
  if (caseDepth > MAX_CASE_DEPTH) {
    throw new GraphError('bad_graph_request', `the query nests CASE expressions ${count(caseDepth)} deep, over the ${MAX_CASE_DEPTH} a query may nest: write them as one CASE with several WHEN`);
  }
  if (tokens > MAX_QUERY_TOKENS) {
    throw new GraphError('bad_graph_request', `the query holds about ${count(tokens)} tokens (words, numbers and punctuation), over the ${count(MAX_QUERY_TOKENS)} a query may hold: shorten it, or pass long lists of values as one list (UNWIND)`);
  }
}

export interface QueryMeasure {
  /** The deepest nesting of ( [ { and CASE. */
  depth: number;
  /** The deepest nesting of CASE alone. */
  caseDepth: number;
  tokens: number;
}

const WORD_ASCII = /[A-Za-z0-9_]/;
const WORD_OTHER = /[\p{L}\p{N}\p{M}]/u;

/**
 * The query's nesting and tokens, in one pass over its raw text. Each character that is no ASCII space, letter,
 * digit or _, and no letter, digit or mark of another script (a Unicode space, say, which an engine may take as a
 * space), counts as a token of its own: counting more is the safe side.
 */
export function measureQuery(query: string): QueryMeasure {
  let depth = 0;
  let deepest = 0;
  let caseDepth = 0;
  let deepestCase = 0;
  let tokens = 0;
  let wordStart = -1;
  const endWord = (end: number) => {
    if (wordStart < 0) return;
    // Only a four- or three-letter run can be CASE or END: the slice is taken for those alone.
    const length = end - wordStart;
    if (length === 4 || length === 3) {
      const word = query.slice(wordStart, end).toUpperCase();
      if (word === 'CASE') {
        deepest = Math.max(deepest, ++depth);
        deepestCase = Math.max(deepestCase, ++caseDepth);
      } else if (word === 'END') {
        if (depth > 0) depth--;
        if (caseDepth > 0) caseDepth--;
      }
    }
    wordStart = -1;
  };
  for (let i = 0; i < query.length; i++) {
    const code = query.charCodeAt(i);
    const char = query[i]!;
    if (code < 0x80 ? WORD_ASCII.test(char) : WORD_OTHER.test(char)) {
      if (wordStart < 0) {
        wordStart = i;
        tokens++;
      }
      continue;
    }
    endWord(i);
    // ASCII spaces and control characters separate tokens; every other character is one.
    if (code <= 0x20) continue;
    tokens++;
    if (code === 0x28 || code === 0x5b || code === 0x7b) deepest = Math.max(deepest, ++depth);
    else if ((code === 0x29 || code === 0x5d || code === 0x7d) && depth > 0) depth--;
  }
  endWord(query.length);
  return { depth: deepest, caseDepth: deepestCase, tokens };
}
