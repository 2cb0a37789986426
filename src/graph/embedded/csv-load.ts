/**
 * Bulk load of the embedded graph from CSV files, with Kùzu's COPY FROM: tables made from the files' headers when
 * they do not exist yet, every file copied in one transaction (a bad file leaves the graph as it was), and a
 * failure told as file, line and column.
 *
 * Headers: a node file's first column is its primary key; an edge file's first two columns are its source and
 * target keys, typed with the node tables they point to. Other columns are properties, STRING unless typed:
 *
 *   clients.csv   id,name,score:DOUBLE
 *   owns.csv      from:Client,to:Account,since:INT64
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { allRows, GraphError } from '../graph-source.js';
import type { EmbeddedGraph } from './embedded-graph.js';

export interface CsvFile {
  /** The node label or edge type. */
  table: string;
  file: string;
}

export interface LoadResult {
  tables: { table: string; kind: 'nodes' | 'edges'; rows: number }[];
  seconds: number;
}

export class CsvLoadError extends Error {
  override name = 'CsvLoadError';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const PROPERTY_TYPES = new Set(['STRING', 'INT64', 'INT32', 'INT16', 'INT8', 'UINT64', 'UINT32', 'DOUBLE', 'FLOAT', 'BOOLEAN', 'DATE', 'TIMESTAMP', 'UUID']);
// A load of millions of rows takes minutes; its time-out is only there to end one that hangs.
const LOAD_TIMEOUT_MS = 3_600_000;
const CATALOGUE_TIMEOUT_MS = 30_000;
// A header longer than this is no header (a file of one 100 MB line was read whole, and echoed back whole).
const MAX_HEADER_BYTES = 65_536;
// The most of a header, a value or a record an error quotes.
const QUOTED_CHARS = 80;
// Kùzu's parallel CSV reader refuses a quoted value that spans lines, telling to use an option the CLI does not offer.
const QUOTED_NEWLINE = /Error in file (.+?) on line \d+: Quoted newlines are not supported/;

interface Column {
  name: string;
  type: string;
}

/**
 * The file's first line, read from at most MAX_HEADER_BYTES of it: a header names columns, and a file whose first
 * line is longer (no line break at all: not a CSV file) is refused without being read whole.
 */
async function headerOf(file: string): Promise<string> {
  let bytes: Buffer;
  let size: number;
  try {
    const handle = await open(file, 'r');
    try {
      size = (await handle.stat()).size;
      bytes = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES + 1));
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
      bytes = bytes.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw new CsvLoadError(`${file}: cannot be read (${excerpt((err as Error).message)})`);
  }
  if (size === 0) throw new CsvLoadError(`${file}: the file is empty: its first line must name the columns`);
  const end = bytes.indexOf(0x0a);
  if (end < 0 && size > MAX_HEADER_BYTES) {
    throw new CsvLoadError(`${file} line 1: no line break in its first ${MAX_HEADER_BYTES.toLocaleString('en')} bytes: the first line names the columns (id,name,score:DOUBLE)`);
  }
  return (end < 0 ? bytes : bytes.subarray(0, end)).toString('utf8').replace(/\r$/, '').replace(/^\uFEFF/, '');
}

/**
 * Text from a file or from the engine, as an error quotes it: at most `max` characters, one line. A value, a
 * header or a record may be megabytes long, and an error is read by a person (and may land in a log).
 */
export function excerpt(text: string, max = QUOTED_CHARS): string {
  const line = text.replace(/[\r\n]+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max)}… (${line.length.toLocaleString('en')} characters)`;
}

function columnsOf(file: string, header: string): Column[] {
  return header.split(',').map((raw, i) => {
    const [name = '', type = '', ...rest] = raw.trim().split(':');
    const where = `${file} line 1, column ${i + 1} ("${excerpt(raw.trim())}")`;
    if (!NAME.test(name) || rest.length) throw new CsvLoadError(`${where}: a column is named with letters, digits and _, optionally followed by :TYPE`);
    // As written: on an edge file's key columns it is a node label, which is case-sensitive.
    return { name, type };
  });
}

function quoted(name: string): string {
  return `\`${name}\``;
}

function pathLiteral(file: string): string {
  const absolute = path.resolve(file);
  if (absolute.includes("'") || absolute.includes('\\')) throw new CsvLoadError(`${file}: a path with a quote or a backslash cannot be loaded: rename or move the file`);
  return `'${absolute}'`;
}

/** A property column's type: STRING unless typed. `index`: the column's place in the header, from 0. */
function propertyType(file: string, column: Column, index: number): string {
  const type = column.type.toUpperCase() || 'STRING';
  if (!PROPERTY_TYPES.has(type)) throw new CsvLoadError(`${file} line 1, column ${index + 1} ("${column.name}"): type ${excerpt(column.type)} is not one of ${[...PROPERTY_TYPES].join(', ')}`);
  return type;
}

/**
 * What a table holds, as the graph's catalogue (or an earlier file of the same load) defines it: a file loaded into
 * it must have these columns, in this order, since COPY reads a file's columns by position, not by name.
 */
interface TableSchema {
  kind: 'nodes' | 'edges';
  /** The properties, in the table's order (an edge table's ends are not among them). */
  properties: Column[];
  /** An edge table's node tables, as pairs [from, to]. */
  ends: [string, string][];
}

/** The schemas of the graph's tables among `names`, from its catalogue (show_tables, table_info, show_connection). */
async function existingSchemas(graph: EmbeddedGraph, names: ReadonlySet<string>): Promise<Map<string, TableSchema>> {
  const read = async (query: string) => allRows(await graph.run(query, { timeoutMs: CATALOGUE_TIMEOUT_MS, maxRows: 100_000, readOnly: true }));
  const schemas = new Map<string, TableSchema>();
  for (const table of await read('CALL show_tables() RETURN name, type')) {
    const name = String(table.name);
    // Only names the load can use (NAME), so they are safe in a literal.
    if (!names.has(name) || (table.type !== 'NODE' && table.type !== 'REL')) continue;
    const properties = (await read(`CALL table_info('${name}') RETURN name, type`)).map((p) => ({ name: String(p.name), type: String(p.type).toUpperCase() }));
    const ends = table.type === 'REL'
      ? (await read(`CALL show_connection('${name}') RETURN *`)).map((c): [string, string] => [String(c['source table name']), String(c['destination table name'])])
      : [];
    schemas.set(name, { kind: table.type === 'NODE' ? 'nodes' : 'edges', properties, ends });
  }
  return schemas;
}

/** `id STRING, name STRING, score DOUBLE`: a table's columns as a message lists them (the first 20). */
function describeColumns(columns: readonly Column[]): string {
  const shown = columns.slice(0, 20).map((c) => `${c.name} ${c.type}`).join(', ');
  return columns.length > 20 ? `${shown}, … (${columns.length} in all)` : shown || 'none';
}

/**
 * Refuses a file whose header does not fit the table it goes into, naming the first column that differs. An untyped
 * column takes the table's type; a typed one must be of it. Without this, Kùzu guessed the file's delimiter to fit
 * the table: a 3-column file into a 1-column table was "loaded", each whole line a key.
 */
function checkHeader(file: string, table: string, kind: TableSchema['kind'], header: Column[], schema: TableSchema): void {
  if (schema.kind !== kind) {
    const what = schema.kind === 'nodes' ? 'a node label' : 'an edge type';
    throw new CsvLoadError(`${file}: ${table} is ${what} of the graph already: load the file with --${schema.kind} ${table}=…`);
  }
  const offset = kind === 'edges' ? 2 : 0;
  if (kind === 'edges') {
    const [from, to] = [header[0]!.type, header[1]!.type];
    if (!schema.ends.some(([f, t]) => f === from && t === to)) {
      const ends = schema.ends.map(([f, t]) => `from ${f} to ${t}`).join(', or ');
      const column = schema.ends.some(([f]) => f === from) ? 1 : 0;
      throw new CsvLoadError(`${file} line 1, column ${column + 1} ("${header[column]!.name}:${header[column]!.type}"): edge type ${table} goes ${ends}, not from ${from} to ${to}`);
    }
  }
  const given = header.slice(offset);
  const expected = schema.properties;
  const rule = `a file loaded into an existing table has its columns, in its order (${table}: ${kind === 'edges' ? 'from, to, ' : ''}${describeColumns(expected)})`;
  for (let i = 0; i < Math.max(given.length, expected.length); i++) {
    const [got, want] = [given[i], expected[i]];
    const where = `${file} line 1, column ${i + offset + 1}`;
    if (!got) throw new CsvLoadError(`${file} line 1: column ${i + offset + 1} ("${want!.name}") is missing: ${rule}`);
    const named = `${where} ("${got.type ? `${got.name}:${got.type}` : got.name}")`;
    if (!want) throw new CsvLoadError(`${named}: table ${table} has no column ${i + offset + 1}: ${rule}`);
    if (got.name !== want.name) throw new CsvLoadError(`${named}: table ${table}'s column ${i + offset + 1} is "${want.name}": ${rule}`);
    if (got.type && got.type.toUpperCase() !== want.type) throw new CsvLoadError(`${named}: ${table}.${want.name} is ${want.type}, not ${got.type.toUpperCase()}`);
  }
}

/** A COPY of one file: the delimiter is a comma, never guessed (Kùzu's guess fitted files to the table's width). */
function copyStatement(table: string, file: string, serial: boolean): string {
  return `COPY ${quoted(table)} FROM ${pathLiteral(file)} (header=true, delim=',', auto_detect=false${serial ? ', parallel=false' : ''})`;
}

/**
 * The statements of one load: node tables and their copies first, then edge tables and theirs. A table that exists
 * (in `existing`, or made by an earlier file of the load) is not made again: the file's header must fit it.
 * `serial`: the files to read with one thread (a quoted value spanning lines, which the parallel reader refuses).
 */
export async function planCsvLoad(
  nodes: CsvFile[],
  edges: CsvFile[],
  existing: ReadonlyMap<string, TableSchema> = new Map(),
  serial: ReadonlySet<string> = new Set(),
): Promise<{ statements: string[]; tables: LoadResult['tables'] }> {
  const statements: string[] = [];
  const tables: LoadResult['tables'] = [];
  const schemas = new Map(existing);
  const copies: string[] = [];
  for (const { table, file } of nodes) {
    if (!NAME.test(table)) throw new CsvLoadError(`node label "${excerpt(table)}" must be letters, digits and _`);
    const columns = columnsOf(file, await headerOf(file));
    const schema = schemas.get(table);
    if (schema) checkHeader(file, table, 'nodes', columns, schema);
    else {
      const properties = columns.map((column, i) => ({ name: column.name, type: propertyType(file, column, i) }));
      schemas.set(table, { kind: 'nodes', properties, ends: [] });
      const definition = properties.map((p) => `${quoted(p.name)} ${p.type}`).join(', ');
      statements.push(`CREATE NODE TABLE ${quoted(table)}(${definition}, PRIMARY KEY(${quoted(columns[0]!.name)}))`);
    }
    copies.push(copyStatement(table, file, serial.has(file)));
    tables.push({ table, kind: 'nodes', rows: 0 });
  }
  statements.push(...copies);
  copies.length = 0;
  for (const { table, file } of edges) {
    if (!NAME.test(table)) throw new CsvLoadError(`edge type "${excerpt(table)}" must be letters, digits and _`);
    const columns = columnsOf(file, await headerOf(file));
    if (columns.length < 2) throw new CsvLoadError(`${file} line 1: an edge file starts with its source and target columns, typed with their node labels (from:Client,to:Phone)`);
    const [from, to, ...rest] = columns as [Column, Column, ...Column[]];
    for (const [i, end] of [from, to].entries()) {
      if (!NAME.test(end.type)) throw new CsvLoadError(`${file} line 1, column ${i + 1} ("${end.name}"): type it with the label of the nodes it points to (${end.name}:Client)`);
    }
    const schema = schemas.get(table);
    if (schema) checkHeader(file, table, 'edges', columns, schema);
    else {
      const properties = rest.map((column, i) => ({ name: column.name, type: propertyType(file, column, i + 2) }));
      schemas.set(table, { kind: 'edges', properties, ends: [[from.type, to.type]] });
      const definition = [`FROM ${quoted(from.type)} TO ${quoted(to.type)}`, ...properties.map((p) => `${quoted(p.name)} ${p.type}`)].join(', ');
      statements.push(`CREATE REL TABLE ${quoted(table)}(${definition})`);
    }
    copies.push(copyStatement(table, file, serial.has(file)));
    tables.push({ table, kind: 'edges', rows: 0 });
  }
  statements.push(...copies);
  return { statements, tables };
}

/**
 * Loads the files into `graph` in one transaction. A failure changes nothing and says file, line and column. A file
 * with a quoted value spanning lines, which Kùzu's parallel reader refuses, is read again with one thread.
 */
export async function loadCsv(graph: EmbeddedGraph, nodes: CsvFile[], edges: CsvFile[]): Promise<LoadResult> {
  const started = performance.now();
  const files = [...nodes, ...edges];
  const existing = await existingSchemas(graph, new Set(files.map((f) => f.table)));
  const serial = new Set<string>();
  for (;;) {
    const { statements, tables } = await planCsvLoad(nodes, edges, existing, serial);
    let results: string[];
    try {
      results = await graph.load(statements, LOAD_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof GraphError)) throw err;
      const multiline = QUOTED_NEWLINE.exec(err.message)?.[1];
      const file = multiline && files.find((f) => path.resolve(f.file) === multiline && !serial.has(f.file))?.file;
      if (file) {
        serial.add(file);
        continue;
      }
      throw new CsvLoadError(await explainCopyError(err.message, files));
    }
    const copied = results.filter((r) => /tuples have been copied/.test(r));
    copied.forEach((r, i) => (tables[i]!.rows = Number(/(\d+) tuples/.exec(r)?.[1] ?? 0)));
    return { tables, seconds: (performance.now() - started) / 1000 };
  }
}

/**
 * Kùzu names the file and line of a value it cannot convert; the column is found from the line. A key it cannot
 * find, or finds twice, it names by value only: the line is found by reading the file.
 */
async function explainCopyError(message: string, files: CsvFile[]): Promise<string> {
  // Kùzu's advice names options of its COPY statement, which the command line does not take.
  const detail = message.replace(/^Copy exception: /, '').replace(/ ?Please specify PARALLEL=FALSE in the options\./, '');
  const located = /Error in file (.+?) on line (\d+): (.*?)(?: Line\/record containing the error: '(.*)')?$/s.exec(detail);
  if (located) {
    const [, file, line, why] = located;
    const value = /Could not convert "(.*?)"/.exec(why!)?.[1] ?? /Cast failed\. (.*?) is not in \w+ range/.exec(why!)?.[1];
    const header = await headerOf(file!).catch(() => '');
    const record = located[4] ?? (await lineOf(file!, Number(line)));
    const index = value !== undefined && record !== undefined ? record.split(',').indexOf(value) : -1;
    const column = index >= 0 ? `, column ${index + 1} ("${excerpt(header.split(',')[index]?.trim() ?? '')}")` : '';
    return `${file} line ${line}${column}: ${excerpt(why!.trim(), 2 * QUOTED_CHARS)} Nothing was loaded.`;
  }
  const missing = /Unable to find primary key value (.*?)\.$/s.exec(detail)?.[1];
  const duplicate = /Found duplicated primary key value (.*?), which/s.exec(detail)?.[1];
  const value = missing ?? duplicate;
  if (value !== undefined) {
    for (const { file } of files) {
      const at = await findValue(file, value, duplicate !== undefined);
      if (at) return `${file} line ${at.line}, column ${at.column} ("${excerpt(at.name)}"): ${missing !== undefined ? `no node has the key "${excerpt(value)}"` : `the key "${excerpt(value)}" is there twice`}. Nothing was loaded.`;
    }
  }
  return `${excerpt(detail, 4 * QUOTED_CHARS)} Nothing was loaded.`;
}

async function lineOf(file: string, wanted: number): Promise<string | undefined> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of lines) if (++n === wanted) return line;
  } catch {
    return undefined;
  } finally {
    lines.close();
  }
  return undefined;
}

async function findValue(file: string, value: string, second: boolean): Promise<{ line: number; column: number; name: string } | undefined> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let header: string[] = [];
  let n = 0;
  let seen = 0;
  try {
    for await (const line of lines) {
      n++;
      if (n === 1) {
        header = line.split(',');
        continue;
      }
      const fields = line.split(',');
      // A missing key is an edge file's source or target (columns 1 and 2); a duplicated key, a node file's first column.
      const columns = second ? [0] : [0, 1];
      for (const c of columns) {
        if (fields[c] === value && (!second || ++seen === 2)) return { line: n, column: c + 1, name: header[c]?.trim() ?? '' };
      }
    }
  } finally {
    lines.close();
  }
  return undefined;
}
