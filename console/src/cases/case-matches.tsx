import { Notice } from '../components/notice';
import { formatTime, formatValue } from '../format';
import type { Alert, CaseMatch } from '../types';
import { useApi } from '../use-api';

/** The case's matches, newest first, with the values of the alert's columns. */
export function CaseMatches({ alert, caseId }: { alert: Alert; caseId: number }) {
  const { data, error } = useApi<{ items: CaseMatch[] }>(`/api/${encodeURIComponent(alert.sourceKey)}/alerts/${alert.id}/cases/${caseId}/matches?limit=50`);
  return (
    <section aria-labelledby="matches" class="card">
      <h2 id="matches">Matches</h2>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {data === undefined ? (
        error ? null : <p class="loading">Loading…</p>
      ) : data.items.length === 0 ? (
        <p class="muted">No match recorded with its values (a match reported through the API has none).</p>
      ) : (
        <table class="data" aria-labelledby="matches">
          <thead>
            <tr>
              <th scope="col">Found</th>
              <th scope="col">Nodes and edges</th>
              {alert.columns.map((c) => (
                <th key={c.columnName} scope="col">
                  {c.columnTitle}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.items.map((m, i) => (
              <tr key={i}>
                <td>{formatTime(m.createdAt)}</td>
                <td>
                  {m.nodes.length} node{m.nodes.length === 1 ? '' : 's'}, {m.edges.length} edge{m.edges.length === 1 ? '' : 's'}
                </td>
                {alert.columns.map((c) => (
                  <td key={c.columnName}>{formatValue(m.columns[c.columnName])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && data.items.length === 50 ? <p class="muted">The newest 50.</p> : null}
    </section>
  );
}
