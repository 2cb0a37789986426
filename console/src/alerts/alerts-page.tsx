import { useEffect } from 'preact/hooks';
import { SelectField } from '../components/field';
import { Link } from '../components/link';
import { Notice, StatusBadge } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatAgo, formatTime } from '../format';
import { navigate } from '../router';
import type { Alert, DataSource } from '../types';
import { useApi } from '../use-api';
import { alertPath, describeProblem, describeRunCounts, describeSchedule } from './alert-words';

/** `/alerts`: the alerts of the first data source (the page has a picker for the others). */
export function AlertsIndex() {
  const { data: sources, error } = useApi<DataSource[]>('/api/dataSources');
  const first = sources?.[0]?.key;
  useEffect(() => {
    if (first) navigate(alertPath(first), { replace: true });
  }, [first]);
  if (error) return <Notice kind="error">{error.message}</Notice>;
  if (!sources || first) return <p class="loading">Loading…</p>;
  return (
    <section>
      <PageTitle title="Alerts">Alerts</PageTitle>
      <p>
        Alerts run on a data source, and there is none yet. Create one with a graph with{' '}
        <code>{'POST /api/admin/sources {"key":"fraud","name":"Fraud","graph":{"vendor":"embedded"}}'}</code>, load it (README, A graph of your own),
        and come back.
      </p>
    </section>
  );
}

/** The alerts of one data source: each with its schedule, last run, next run, problems and open cases. */
export function AlertsPage({ sourceKey }: { sourceKey: string }) {
  const sources = useApi<DataSource[]>('/api/dataSources');
  const alerts = useApi<{ items: Alert[] }>(`/api/${encodeURIComponent(sourceKey)}/alerts?limit=1000`, { refreshMs: 10_000 });
  const source = sources.data?.find((s) => s.key === sourceKey);
  const error = alerts.error ?? sources.error;

  return (
    <>
      <PageTitle title={`Alerts of ${source?.name ?? sourceKey}`}>Alerts</PageTitle>
      <div class="section-head">
        <SelectField
          label="Data source"
          value={sourceKey}
          options={(sources.data ?? [{ key: sourceKey, name: sourceKey }]).map((s) => ({ value: s.key, label: `${s.name} (${s.key})` }))}
          onChange={(e) => navigate(alertPath(e.currentTarget.value))}
        />
        {source && !source.connected ? <span class="bad">its graph does not answer now</span> : null}
        <Link href={alertPath(sourceKey, 'new')} class="button">
          New alert
        </Link>
      </div>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      <section aria-labelledby="alerts-list" class="card">
        <h2 id="alerts-list">Alerts of {source?.name ?? sourceKey}</h2>
        {alerts.data === undefined ? (
          error ? null : <p class="loading">Loading…</p>
        ) : alerts.data.items.length === 0 ? (
          <p>
            No alert on this data source yet. <Link href={alertPath(sourceKey, 'new')}>Write the first one</Link>: a Cypher query whose every row is a
            match, the variable that names its case, and when to run it.
          </p>
        ) : (
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Schedule</th>
                <th scope="col">Last run</th>
                <th scope="col">Next run</th>
                <th scope="col">Open cases</th>
              </tr>
            </thead>
            <tbody>
              {alerts.data.items.map((alert) => (
                <AlertRow key={alert.id} alert={alert} />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function AlertRow({ alert }: { alert: Alert }) {
  const run = alert.runs[0];
  const open = alert.caseCounts ? alert.caseCounts.unconfirmed + alert.caseCounts['in-progress'] : undefined;
  return (
    <tr>
      <td>
        <Link href={alertPath(alert.sourceKey, alert.id)}>{alert.title}</Link>
        <div class="muted">
          #{alert.id} {alert.enabled ? null : <span class="badge badge-unconfirmed">disabled</span>} {alert.status === 'running' ? <span class="badge badge-pending">running</span> : null}
        </div>
      </td>
      <td>
        {describeSchedule(alert)}
        {alert.cron ? (
          <div class="muted">
            <code>{alert.cron}</code>
          </div>
        ) : null}
      </td>
      <td>
        {run ? (
          <>
            <StatusBadge status={run.outcome} /> <span title={formatTime(run.startedAt)}>{formatAgo(run.startedAt)}</span>
            <div class="muted">{describeRunCounts(run)}</div>
          </>
        ) : (
          <span class="muted">never run</span>
        )}
        {alert.lastRunProblem.map((p, i) => (
          <div key={i} class="bad small-text">
            {describeProblem(p, alert)}
          </div>
        ))}
      </td>
      <td>{alert.nextRun ? <span title={formatTime(alert.nextRun)}>{formatAgo(alert.nextRun)}</span> : <span class="muted">—</span>}</td>
      <td class="num">
        {open === undefined ? '—' : <Link href={alertPath(alert.sourceKey, alert.id, 'cases')}>{String(open)}</Link>}
      </td>
    </tr>
  );
}
