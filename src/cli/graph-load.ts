import path from 'node:path';
import { CsvLoadError, loadCsv, type CsvFile } from '../graph/embedded/csv-load.js';
import { EmbeddedGraph } from '../graph/embedded/embedded-graph.js';
import { GraphError } from '../graph/graph-source.js';
import { embeddedGraphFolder } from '../sources/graph-registry.js';
import { findDataSource } from '../sources/sources.js';
import { withAdminDatabase } from './admin-database.js';
import { OperatorError } from './startup-failures.js';
import { parseArgs, UsageError } from './usage.js';

// Below these a load's time is mostly its fixed cost (the catalogue read, the transaction), not rows: 8 rows in
// 0.4 s said "18 rows/s", of a loader that copies hundreds of thousands a second.
const RATE_MIN_ROWS = 10_000;
const RATE_MIN_SECONDS = 1;

/** ` (123,456 rows/s)` for a load large enough for its rate to mean something; nothing otherwise. */
export function rateOf(rows: number, seconds: number): string {
  if (rows < RATE_MIN_ROWS || seconds < RATE_MIN_SECONDS) return '';
  return ` (${Math.round(rows / seconds).toLocaleString('en')} rows/s)`;
}

const USAGE = 'usage: alert-webhooks graph load <sourceKey> --nodes <Label>=<file.csv> … [--edges <Type>=<file.csv> …]';

/** `--nodes Client=clients.csv` → {table: 'Client', file: 'clients.csv'}. */
function fileArgs(values: string[], option: string): CsvFile[] {
  return values.map((value) => {
    const eq = value.indexOf('=');
    if (eq <= 0 || eq === value.length - 1) throw new UsageError(`--${option} takes <name>=<file.csv>, got "${value}"`);
    return { table: value.slice(0, eq), file: value.slice(eq + 1) };
  });
}

/**
 * `graph load`: loads CSV files into a data source's embedded graph (src/graph/embedded/csv-load.ts), all or
 * nothing, and prints what it loaded and how fast. It opens the graph itself, so the service must not hold it.
 */
export async function graphLoad(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  // parseArgs keeps the last of a repeated option: the repeated ones are gathered here first.
  const nodes: string[] = [];
  const edges: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const option = /^--(nodes|edges)(?:=(.*))?$/s.exec(arg);
    if (!option) {
      rest.push(arg);
      continue;
    }
    const value = option[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${option[1]} needs <name>=<file.csv>`);
    (option[1] === 'nodes' ? nodes : edges).push(value);
  }
  const { positional } = parseArgs(rest);
  if (positional.length !== 1 || nodes.length + edges.length === 0) throw new UsageError(USAGE);
  const sourceKey = positional[0]!;
  await withAdminDatabase(undefined, async (db, config) => {
    const source = await findDataSource(db, sourceKey).catch(() => undefined);
    if (!source) throw new OperatorError(`no data source has the key "${sourceKey}": create it first (POST /api/admin/sources with graph {"vendor": "embedded"})`);
    if (source.graph?.vendor !== 'embedded') throw new OperatorError(`data source "${sourceKey}" has no embedded graph: graph load fills embedded graphs only`);
    const files = [...fileArgs(nodes, 'nodes'), ...fileArgs(edges, 'edges')];
    // The graph's process is confined to its folder (confinement.ts): it may read the files named here besides.
    const graph = new EmbeddedGraph({
      folder: embeddedGraphFolder(config.dataDir, sourceKey), bufferPoolBytes: config.graphBufferPoolBytes, label: `data source "${sourceKey}"`,
      readablePaths: files.map((f) => path.resolve(f.file)),
    });
    try {
      await graph.open().catch((err: unknown) => {
        if (err instanceof GraphError) throw new OperatorError(`${err.message}. A running service holds it: stop the service to load files, then start it again.`);
        throw err;
      });
      const { tables, seconds } = await loadCsv(graph, fileArgs(nodes, 'nodes'), fileArgs(edges, 'edges'));
      const rows = tables.reduce((sum, t) => sum + t.rows, 0);
      for (const t of tables) print(`${t.kind === 'nodes' ? 'nodes' : 'edges'} ${t.table}: ${t.rows.toLocaleString('en')}`);
      print(`loaded ${rows.toLocaleString('en')} rows into data source "${sourceKey}" in ${seconds.toFixed(1)} s${rateOf(rows, seconds)}`);
    } catch (err) {
      if (err instanceof CsvLoadError) throw new OperatorError(err.message);
      throw err;
    } finally {
      await graph.close();
    }
  });
}
