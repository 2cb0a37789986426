/**
 * The first phase of an alert run: its queries, all started before its transaction opens, so the time the engine
 * takes to answer is not spent holding it. The embedded engine has an answer made when its query starts; a Bolt
 * server makes its answer as it is read, so a stream made as it is read (a Bolt graph's, RowStream.madeAsRead) is
 * read whole here (read-ahead.ts): the alert's lock, and the embedded database's one session, are never held while a
 * Bolt server works out its answer.
 */
import type { Queryable } from '../db/database.js';
import { GraphError, type GraphSource, type RowStream } from '../graph/graph-source.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import { ALERT_THREADS } from '../sources/graph-share.js';
import type { AlertQuery, RunProblem } from './alerts.js';
import { readAhead, READ_AHEAD_BYTES } from './read-ahead.js';

export interface StartedQuery {
  queryId: number;
  stream: RowStream;
}

export interface StartedQueries {
  streams: StartedQuery[];
  /** Queries that could not start (a time-out, a refused query, the graph away), and why. */
  problems: RunProblem[];
  /** The graph could not be reached: the alert's next try comes sooner (alert-run.ts, nextDue). */
  unavailable: boolean;
}

export interface QueryBounds {
  /** The most rows a run reads (effectiveLimits): each stream is asked for one more, to tell the cap was met. */
  maxMatches: number;
  /** The run's time-out (effectiveLimits), shared by its queries. */
  timeoutMs: number;
  /** When the run started (performance.now()): its time-out counts from there. */
  started: number;
}

/** A graph's failure as a run's problem of query `queryId` (of the alert when none). */
export function problemOf(err: unknown, queryId: number | undefined, partial: boolean): RunProblem {
  const key = err instanceof GraphError ? err.key : 'data_source_unavailable';
  const message = err instanceof Error ? err.message : String(err);
  // A time-out may have cut what the query would have found: the run is partial, whatever was read.
  return { source: 'alertQuery', ...(queryId === undefined ? {} : { queryId }), error: { key, message }, partial: partial || key === 'graph_request_timeout' };
}

/** Starts each of the alert's queries on its source's graph (read-only, its share of the time-out, the row cap). */
export async function startQueries(db: Queryable, graphs: GraphRegistry, sourceKey: string, queries: readonly AlertQuery[], bounds: QueryBounds): Promise<StartedQueries> {
  const started: StartedQueries = { streams: [], problems: [], unavailable: false };
  let graph: GraphSource;
  try {
    graph = (await graphs.require(db, sourceKey)).graph;
  } catch (err) {
    return { ...started, unavailable: true, problems: [{ ...problemOf(err, undefined, false), source: 'alert' }] };
  }
  // timeoutMs is the run's: its queries share it, each given what the ones before it left. Each query with a
  // time-out of its own let a run of several outlive its lease (one timeoutMs and a margin), and another process
  // could claim it while it ran.
  const deadline = bounds.started + bounds.timeoutMs;
  for (const q of queries) {
    const left = Math.floor(deadline - performance.now());
    if (left <= 0) {
      const message = `not run: the queries before it took the run's time-out (timeoutMs, ${bounds.timeoutMs} ms)`;
      started.problems.push({ source: 'alertQuery', queryId: q.id, error: { key: 'graph_request_timeout', message }, partial: true });
      continue;
    }
    try {
      // Every worker thread of the engine but one, which stays the users' (graph-share.ts).
      const stream = await graph.run(q.query, { readOnly: true, timeoutMs: left, maxRows: bounds.maxMatches + 1, properties: false, threads: ALERT_THREADS });
      // A stream made as it is read (Bolt) is read now, before the transaction opens (read-ahead.ts).
      started.streams.push({ queryId: q.id, stream: stream.madeAsRead ? await readAhead(stream, READ_AHEAD_BYTES) : stream });
    } catch (err) {
      if (err instanceof GraphError && err.key === 'data_source_unavailable') started.unavailable = true;
      started.problems.push(problemOf(err, q.id, false));
    }
  }
  return started;
}
