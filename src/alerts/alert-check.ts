/**
 * Checks an alert's queries against its source's graph before the alert is saved: each must parse and only read,
 * and must return the `target` variable and every column the alert picks. A query is started with a row cap of
 * one; one that does not answer within CHECK_TIMEOUT_MS is taken as it is (it parsed: the engine began running it).
 */
import type { Database } from '../db/database.js';
import { AppError, invalidParameter } from '../errors.js';
import { GraphError } from '../graph/graph-source.js';
import { holdsGraphItems } from '../graph/items.js';
import { checkQueryBounds } from '../graph/query-bounds.js';
import { INTERACTIVE_THREADS } from '../sources/graph-share.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import type { QueryChecker } from './alerts.js';

const CHECK_TIMEOUT_MS = 30_000;

export function alertQueryChecker(db: Database, graphs: GraphRegistry): QueryChecker {
  return async (sourceKey, queries, target, columns, timeoutMs) => {
    // The engine refusing the query, or failing on its first row (one over the size a row may hold, say), is the
    // query's fault: 400 naming it.
    const refused = (err: unknown, i: number) =>
      err instanceof GraphError && (err.key === 'bad_graph_request' || err.key === 'write_forbidden')
        ? new AppError('invalid_alert_query', `queries[${i}] ("${queries[i]!.name}"): ${err.key === 'write_forbidden' ? 'an alert query may only read: ' : ''}${err.message}`, undefined, `queries[${i}].query`)
        : err;
    // A query past the bounds of its text (length, nesting, tokens) is refused before the graph is opened.
    for (const [i, q] of queries.entries()) {
      try {
        checkQueryBounds(q.query);
      } catch (err) {
        throw refused(err, i);
      }
    }
    const { graph } = await graphs.require(db, sourceKey);
    for (const [i, q] of queries.entries()) {
      const named = `queries[${i}] ("${q.name}")`;
      let stream;
      try {
        stream = await graph.run(q.query, { readOnly: true, timeoutMs: Math.min(timeoutMs, CHECK_TIMEOUT_MS), maxRows: 1, threads: INTERACTIVE_THREADS });
      } catch (err) {
        if (err instanceof GraphError && err.key === 'graph_request_timeout') continue;
        throw refused(err, i);
      }
      let first;
      try {
        for await (const row of stream) {
          first = row;
          break;
        }
      } catch (err) {
        if (!(err instanceof GraphError && err.key === 'graph_request_timeout')) throw refused(err, i);
      } finally {
        await stream.close();
      }
      const returned = stream.columns;
      if (target !== null && !returned.includes(target)) {
        throw new AppError('invalid_alert_target', `target "${target}" is not returned by ${named}, which returns ${returned.join(', ') || 'nothing'}`, undefined, 'target');
      }
      if (target !== null && first && !holdsGraphItems(first[target]!)) {
        throw new AppError('invalid_alert_target', `target "${target}" of ${named} holds no node, edge or path: a case is about graph items`, undefined, 'target');
      }
      columns.forEach((c, j) => {
        if (!returned.includes(c.columnName)) throw invalidParameter(`columns[${j}].columnName "${c.columnName}" is not returned by ${named}, which returns ${returned.join(', ')}`, `columns[${j}].columnName`);
      });
    }
  };
}
