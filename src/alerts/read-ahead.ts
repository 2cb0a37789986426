/**
 * An alert run reads a stream made as it is read (a Bolt graph's, RowStream.madeAsRead) whole before its
 * transaction opens: a Bolt server works out its answer as it is read, so reading it inside the transaction held the
 * alert's lock (and, on the embedded database, the one session every API call needs) for as long as the query ran,
 * up to the run's time-out. The embedded engine has its answer made when its query starts; its stream is left as it is.
 *
 * What is read is held in this process: at most maxMatches + 1 rows (the run's own bound), each at most MAX_ROW_BYTES
 * (the adapter's), and at most `maxBytes` in all: past that the run stops reading there, records what it read, and
 * says so (a `bad_graph_request` problem, the run partial).
 */
import { GraphError, type RowStream } from '../graph/graph-source.js';
import type { GraphRow } from '../graph/items.js';
import { approximateBytes } from '../graph/row-bytes.js';
import { identifiedRows } from '../graph/row-identity.js';

/** What a run on a Bolt graph holds of its rows before it records them: 64 MB (rows without properties are a few hundred bytes). */
export const READ_AHEAD_BYTES = 64 * 1024 * 1024;

/**
 * Reads `stream` to its end (or to `maxBytes`) and closes it; answers a stream of the rows read. A failure while
 * reading (a time-out, the server gone) is kept and thrown after the rows read before it, as the stream would have.
 */
export async function readAhead(stream: RowStream, maxBytes: number): Promise<RowStream> {
  const rows: GraphRow[] = [];
  let failure: { err: unknown } | undefined;
  let bytes = 0;
  try {
    for await (const row of stream) {
      bytes += approximateBytes(row);
      if (bytes > maxBytes) {
        const message = `the run stopped reading after ${rows.length} rows: they hold more than ${Math.round(maxBytes / 1024 / 1024)} MB, the most a run holds of a Bolt graph's rows before recording them; return fewer or smaller values`;
        failure = { err: new GraphError('bad_graph_request', message) };
        break;
      }
      rows.push(row);
    }
  } catch (err) {
    failure = { err };
  } finally {
    await stream.close();
  }
  const truncated = stream.truncated;
  const held: RowStream = {
    columns: stream.columns,
    truncated,
    // Read already.
    madeAsRead: false,
    async *[Symbol.asyncIterator]() {
      yield* rows;
      if (failure) throw failure.err;
    },
    identified: (batchRows) => identifiedRows(held, batchRows),
    async close() {
      rows.length = 0;
    },
  };
  return held;
}
