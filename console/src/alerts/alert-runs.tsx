import { useState } from 'preact/hooks';
import { Notice, StatusBadge } from '../components/notice';
import { formatDuration, formatTime } from '../format';
import type { Alert, AlertRun } from '../types';
import { useApi } from '../use-api';
import { describeProblem } from './alert-words';

const PAGE_SIZE = 20;

/** The run history of an alert, newest first, followed while open; partial and failed runs marked with their problems. */
export function AlertRuns({ alert }: { alert: Alert }) {
  const [offset, setOffset] = useState(0);
  const { data, error } = useApi<{ items: AlertRun[] }>(`/api/${encodeURIComponent(alert.sourceKey)}/alerts/${alert.id}/runs?offset=${offset}&limit=${PAGE_SIZE}`, {
    refreshMs: 5000,
  });
  const runs = data?.items;
  return (
    <section aria-labelledby="runs" class="card">
      <div class="section-head">
        <h2 id="runs">Runs</h2>
        <span class="muted refresh">Refreshes every 5 s</span>
      </div>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {runs === undefined ? (
        error ? null : <p class="loading">Loading…</p>
      ) : runs.length === 0 && offset === 0 ? (
        <p>No run yet. {alert.cron ? `The schedule runs it next at ${formatTime(alert.nextRun)}, or ` : ''}Run it now with the button above.</p>
      ) : (
        <table class="data" aria-labelledby="runs">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Trigger</th>
              <th scope="col">Outcome</th>
              <th scope="col">Took</th>
              <th scope="col" title="Rows the queries answered: each counts towards the alert's most matches, a match or not">
                Rows read
              </th>
              <th scope="col" title="Distinct matches new to the alert / recorded before this run: a match found by several rows counts once">
                Matches new / seen
              </th>
              <th scope="col">Cases opened</th>
              <th scope="col">Events</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <RunRows key={run.id} run={run} alert={alert} />
            ))}
          </tbody>
        </table>
      )}
      {runs && (offset > 0 || runs.length === PAGE_SIZE) ? (
        <nav class="pager" aria-label="Runs pages">
          <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
            Newer runs
          </button>
          <button type="button" class="secondary" disabled={runs.length < PAGE_SIZE} onClick={() => setOffset(offset + PAGE_SIZE)}>
            Older runs
          </button>
        </nav>
      ) : null}
    </section>
  );
}

function RunRows({ run, alert }: { run: AlertRun; alert: Alert }) {
  return (
    <>
      <tr class={run.outcome === 'ok' ? '' : `run-${run.outcome}`}>
        <td>{formatTime(run.startedAt)}</td>
        <td>{run.trigger === 'manual' ? 'by hand' : 'schedule'}</td>
        <td>
          <StatusBadge status={run.outcome} />
        </td>
        <td class="num">{formatDuration(run.durationMs)}</td>
        <td class="num">{run.rowsRead}</td>
        <td class="num">
          {run.matchesNew} / {run.matchesSeen}
        </td>
        <td class="num">{run.casesOpened}</td>
        <td class="num">{run.eventsEmitted}</td>
      </tr>
      {run.problems.length ? (
        <tr class={`problems run-${run.outcome}`}>
          <td colSpan={8}>
            <ul>
              {run.problems.map((p, i) => (
                <li key={i}>{describeProblem(p, alert)}</li>
              ))}
            </ul>
          </td>
        </tr>
      ) : null}
    </>
  );
}
