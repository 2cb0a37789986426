import { describeCron } from '../cron';
import { formatDuration } from '../format';
import type { Alert, AlertRun } from '../types';

// An alert's schedule, runs and problems in plain words, for the list and the alert's pages.

export type RunProblem = AlertRun['problems'][number];

export const alertPath = (sourceKey: string, alertId?: number | string, tab = '') =>
  `/sources/${encodeURIComponent(sourceKey)}/alerts${alertId === undefined ? '' : `/${alertId}${tab ? `/${tab}` : ''}`}`;

/** "every day at 03:00", the expression itself when it has no common reading, or when it runs without one. */
export function describeSchedule(alert: Pick<Alert, 'cron' | 'enabled' | 'queries'>): string {
  if (alert.queries.length === 0) return 'takes matches reported through the API';
  if (!alert.cron) return 'only when run by hand';
  return describeCron(alert.cron) ?? alert.cron;
}

const PROBLEMS: Record<string, string> = {
  max_matches_reached: 'stopped at its most matches (maxMatches)',
  match_too_large: 'a row held more than 10,000 nodes and edges and was left out',
  graph_request_timeout: 'a query ran past its time-out',
  data_source_unavailable: 'the graph could not be reached',
  bad_graph_request: 'the graph refused a query',
};

/** One problem of a run in words: what happened, whether the run is partial, and the engine's message. */
export function describeProblem(problem: RunProblem, alert?: Pick<Alert, 'queries'>): string {
  const query = problem.queryId === undefined ? '' : alert?.queries.find((q) => q.id === problem.queryId)?.name;
  const what = PROBLEMS[problem.error.key] ?? problem.error.key;
  return `${query ? `Query "${query}": ` : ''}${what}${problem.partial ? ' (partial: what was read is kept)' : ''}. ${problem.error.message}`;
}

/** "3 new, 1 seen in 1.2 s" */
export const describeRunCounts = (run: AlertRun) => `${run.matchesNew} new, ${run.matchesSeen} seen in ${formatDuration(run.durationMs)}`;

export const OUTCOME_LABEL: Record<AlertRun['outcome'], string> = { ok: 'ok', partial: 'partial', failed: 'failed' };
