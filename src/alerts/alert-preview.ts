/**
 * What an alert query would find, recording nothing (POST /api/:sourceKey/graph/alertPreview): each row as the
 * caller may read it, its nodes and edges and the alert's column values.
 *
 * A preview row is not the run's match (alert-rows.ts `matchOfRow`), and cannot be without changing the answer: a
 * match is the row's ids, sorted into an identity and a case key, and no match at all for a row that holds no node
 * or edge; a preview row is the items themselves (properties included, filtered by the caller's groups), in the
 * order the row holds them, for every row. What the two share is the run's own code: the column values
 * (`columnValues`) and the same walk over a row's values (nodes, edges, paths, lists).
 */
import { readableGraph } from '../access/graph-filter.js';
import type { SourceAccess } from '../access/source-access.js';
import type { Principal } from '../auth/principal.js';
import type { Database } from '../db/database.js';
import { AppError, invalidParameter } from '../errors.js';
import { queryRefused, type RowStream } from '../graph/graph-source.js';
import { Subgraph, type GraphRow } from '../graph/items.js';
import { INTERACTIVE_THREADS } from '../sources/graph-share.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import type { QuerySlots } from '../sources/query-slots.js';
import { columnValues } from './alert-rows.js';
import type { AlertColumn, AlertLimits } from './alerts.js';
import type { Preview, PreviewRow } from './schemas.js';

export interface PreviewDependencies {
  db: Database;
  graphs: GraphRegistry;
  limits: AlertLimits;
  /** The interactive queries each user has running: a preview takes one, as run/query does. */
  slots: QuerySlots;
}

const DEFAULT_PREVIEW_LIMIT = 50;
const DEFAULT_PREVIEW_TIMEOUT_MS = 30_000;
/**
 * The most a preview's answer may hold (its JSON): rows of large values, up to 1,000 of them, were all held at once
 * (a row may hold up to 16 MB), and four previews a user at once could take the service's memory.
 */
export const MAX_PREVIEW_BYTES = 8 * 1024 * 1024;

/**
 * The rows `preview` finds on the source `access` is for, in one of the caller's query slots. Whether the caller may
 * preview, and may ask for columns, is the route's to decide (it holds the request's access) before this is called.
 */
export async function previewAlertQuery(deps: PreviewDependencies, principal: Principal, access: SourceAccess, preview: Preview): Promise<PreviewRow[]> {
  const { db, graphs, limits, slots } = deps;
  return slots.hold(principal, access.sourceKey, async () => {
    const { graph } = await graphs.require(db, access.sourceKey);
    const stream = await graph
      .run(preview.query, {
        readOnly: true,
        timeoutMs: Math.min(preview.timeout ?? DEFAULT_PREVIEW_TIMEOUT_MS, limits.maxRuntimeMs),
        maxRows: preview.limit ?? DEFAULT_PREVIEW_LIMIT,
        threads: INTERACTIVE_THREADS,
      })
      .catch((err: unknown) => {
        throw queryRefused(err, 'query');
      });
    const target = preview.target;
    if (target && !stream.columns.includes(target)) {
      await stream.close();
      throw new AppError('invalid_alert_target', `target "${target}" is not returned by the query, which returns ${stream.columns.join(', ')}`, undefined, 'target');
    }
    return previewRows(stream, access, preview.columns ?? []);
  });
}

/** Each row of `stream` as a preview row, refused past MAX_PREVIEW_BYTES rather than held whole. */
async function previewRows(stream: RowStream, access: SourceAccess, columns: readonly AlertColumn[]): Promise<PreviewRow[]> {
  const rows: PreviewRow[] = [];
  let bytes = 0;
  for await (const row of stream) {
    const entry = previewRowOf(row, access, columns);
    bytes += Buffer.byteLength(JSON.stringify(entry));
    // Leaving the loop closes the stream: the engine reads no further.
    if (bytes > MAX_PREVIEW_BYTES) throw invalidParameter(`the preview's rows hold more than ${MAX_PREVIEW_BYTES / 1024 / 1024} MB (past row ${rows.length}): ask for fewer rows (limit) or return smaller values`, 'limit');
    rows.push(entry);
  }
  return rows;
}

/** One row alone, as a query's answer: an edge is kept beside its two ends in the row. */
function previewRowOf(row: GraphRow, access: SourceAccess, columns: readonly AlertColumn[]): PreviewRow {
  const subgraph = new Subgraph();
  subgraph.addRow(row);
  const values = columnValues(row, columns);
  const { nodes, edges } = readableGraph(access, subgraph.toJSON());
  return { nodes, edges, columns: columns.map((c) => values[c.columnName] as string | number | null) };
}
