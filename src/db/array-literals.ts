/**
 * PostgreSQL array literals built here rather than by pg, for the bulk statements of an alert run (thousands of
 * elements a statement, `$n::text[]`) and the worker's batches of outcomes: pg escapes every element with two regular expressions, which for the events'
 * payloads (JSON, full of quotes) took 0.8 s per 60,000, against 0.1 s here. Also how a row's list of ids travels as
 * one element of an unnest() parameter (rows of different lengths rule out a two-dimensional array): a literal
 * inside a literal.
 */

// What JSON.stringify would write as an escape that an array literal reads otherwise (\n, \uXXXX): control
// characters, and surrogates (a lone one is escaped; a pair is not, but is rare enough to take the slow path).
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const JSON_ESCAPED = /[\u0000-\u001f\ud800-\udfff]/;

/** One element, always quoted (so empty, NULL, spaces and braces need no thought): only `"` and `\` are escaped. */
function element(text: string): string {
  if (!text.includes('"') && !text.includes('\\')) return `"${text}"`;
  // Otherwise JSON's quoting is the array's: \" and \\, and nothing else for text without the characters above.
  return JSON_ESCAPED.test(text) ? `"${text.replace(/["\\]/g, '\\$&')}"` : JSON.stringify(text);
}

/** The literal of `items` as a text[]: `{"a","b c"}`; a null is the array's NULL. */
export function textArray(items: readonly (string | null)[]): string {
  let literal = '{';
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    literal += `${i === 0 ? '' : ','}${item === null ? 'NULL' : element(item)}`;
  }
  return `${literal}}`;
}

/**
 * The literal of `values`' JSON texts as a text[] (each element `JSON.stringify(value)`), in one native pass for the
 * whole array: JSON.stringify's text never holds a control character or a lone surrogate (it escapes them), so
 * quoting it again as a JSON string escapes only `"` and `\\`, as an array literal's element wants, and a JSON array
 * of such strings is the literal but for its brackets. Measured for the worker's outcome batches (bench/README.md,
 * "The worker's pipeline").
 */
export function jsonTextArray(values: readonly unknown[]): string {
  const texts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) texts[i] = JSON.stringify(values[i]);
  const quoted = JSON.stringify(texts);
  return `{${quoted.slice(1, -1)}}`;
}

/** The literal of `values` as an int[] or bigint[]: `{1,2}`. */
export function integerArray(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}

/** The literal of `values` as an int[] or bigint[] where some are NULL: `{1,NULL}`. */
export function nullableIntegerArray(values: readonly (number | null)[]): string {
  return `{${values.map((value) => value ?? 'NULL').join(',')}}`;
}
