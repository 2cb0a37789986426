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
import { createInterface } from 'node:readline';
import path from 'node:path';
import { GraphError } from '../graph-source.js';
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

interface Column {
  name: string;
  type: string;
}

async function headerOf(file: string): Promise<string> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  try {
    for await (const line of lines) return line.replace(/^\uFEFF/, '');
  } catch (err) {
    throw new CsvLoadError(`${file}: cannot be read (${(err as Error).message})`);
  } finally {
    lines.close();
  }
  throw new CsvLoadError(`${file}: the file is empty: its first line must name the columns`);
}

function columnsOf(file: string, header: string): Column[] {
  return header.split(',').map((raw, i) => {
    const [name = '', type = '', ...rest] = raw.trim().split(':');
    const where = `${file} line 1, column ${i + 1} ("${raw.trim()}")`;
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

/** A property column's definition: STRING unless typed. `offset`: where the properties start in the header. */
function propertyDefinitions(file: string, columns: Column[], offset: number): string[] {
  return columns.map((column, i) => {
    const type = column.type.toUpperCase() || 'STRING';
    if (!PROPERTY_TYPES.has(type)) throw new CsvLoadError(`${file} line 1, column ${i + offset + 1} ("${column.name}"): type ${column.type} is not one of ${[...PROPERTY_TYPES].join(', ')}`);
    return `${quoted(column.name)} ${type}`;
  });
}

/** The statements of one load: node tables and their copies first, then edge tables and theirs. */
export async function planCsvLoad(nodes: CsvFile[], edges: CsvFile[]): Promise<{ statements: string[]; tables: LoadResult['tables'] }> {
  const statements: string[] = [];
  const tables: LoadResult['tables'] = [];
  const copies: string[] = [];
  for (const { table, file } of nodes) {
    if (!NAME.test(table)) throw new CsvLoadError(`node label "${table}" must be letters, digits and _`);
    const columns = columnsOf(file, await headerOf(file));
    const definition = propertyDefinitions(file, columns, 0).join(', ');
    statements.push(`CREATE NODE TABLE IF NOT EXISTS ${quoted(table)}(${definition}, PRIMARY KEY(${quoted(columns[0]!.name)}))`);
    copies.push(`COPY ${quoted(table)} FROM ${pathLiteral(file)} (header=true)`);
    tables.push({ table, kind: 'nodes', rows: 0 });
  }
  statements.push(...copies);
  copies.length = 0;
  for (const { table, file } of edges) {
    if (!NAME.test(table)) throw new CsvLoadError(`edge type "${table}" must be letters, digits and _`);
    const columns = columnsOf(file, await headerOf(file));
    if (columns.length < 2) throw new CsvLoadError(`${file} line 1: an edge file starts with its source and target columns, typed with their node labels (from:Client,to:Phone)`);
    const [from, to, ...properties] = columns as [Column, Column, ...Column[]];
    for (const [i, end] of [from, to].entries()) {
      if (!NAME.test(end.type)) throw new CsvLoadError(`${file} line 1, column ${i + 1} ("${end.name}"): type it with the label of the nodes it points to (${end.name}:Client)`);
    }
    const definition = [`FROM ${quoted(from.type)} TO ${quoted(to.type)}`, ...propertyDefinitions(file, properties, 2)].join(', ');
    statements.push(`CREATE REL TABLE IF NOT EXISTS ${quoted(table)}(${definition})`);
    copies.push(`COPY ${quoted(table)} FROM ${pathLiteral(file)} (header=true)`);
    tables.push({ table, kind: 'edges', rows: 0 });
  }
  statements.push(...copies);
  return { statements, tables };
}

/** Loads the files into `graph` in one transaction. A failure changes nothing and says file, line and column. */
export async function loadCsv(graph: EmbeddedGraph, nodes: CsvFile[], edges: CsvFile[]): Promise<LoadResult> {
  const started = performance.now();
  const { statements, tables } = await planCsvLoad(nodes, edges);
  let results: string[];
  try {
    results = await graph.load(statements, LOAD_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof GraphError) throw new CsvLoadError(await explainCopyError(err.message, [...nodes, ...edges]));
    throw err;
  }
  const copied = results.filter((r) => /tuples have been copied/.test(r));
  copied.forEach((r, i) => (tables[i]!.rows = Number(/(\d+) tuples/.exec(r)?.[1] ?? 0)));
  return { tables, seconds: (performance.now() - started) / 1000 };
}

/**
 * Kùzu names the file and line of a value it cannot convert; the column is found from the line. A key it cannot
 * find, or finds twice, it names by value only: the line is found by reading the file.
 */
async function explainCopyError(message: string, files: CsvFile[]): Promise<string> {
  const detail = message.replace(/^Copy exception: /, '');
  const located = /Error in file (.+?) on line (\d+): (.*?)(?: Line\/record containing the error: '(.*)')?$/s.exec(detail);
  if (located) {
    const [, file, line, why] = located;
    const value = /Could not convert "(.*?)"/.exec(why!)?.[1] ?? /Cast failed\. (.*?) is not in \w+ range/.exec(why!)?.[1];
    const header = await headerOf(file!).catch(() => '');
    const record = located[4] ?? (await lineOf(file!, Number(line)));
    const index = value !== undefined && record !== undefined ? record.split(',').indexOf(value) : -1;
    const column = index >= 0 ? `, column ${index + 1} ("${header.split(',')[index]?.trim()}")` : '';
    return `${file} line ${line}${column}: ${why!.trim()} Nothing was loaded.`;
  }
  const missing = /Unable to find primary key value (.*?)\.$/.exec(detail)?.[1];
  const duplicate = /Found duplicated primary key value (.*?), which/.exec(detail)?.[1];
  const value = missing ?? duplicate;
  if (value !== undefined) {
    for (const { file } of files) {
      const at = await findValue(file, value, duplicate !== undefined);
      if (at) return `${file} line ${at.line}, column ${at.column} ("${at.name}"): ${missing !== undefined ? `no node has the key "${value}"` : `the key "${value}" is there twice`}. Nothing was loaded.`;
    }
  }
  return `${detail} Nothing was loaded.`;
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
