import { useState } from 'preact/hooks';
import { SelectField } from '../components/field';
import { Link } from '../components/link';
import { Notice, StatusBadge } from '../components/notice';
import { Pager } from '../components/pager';
import { formatAgo, formatTime, formatValue } from '../format';
import { CASE_STATUSES, type Alert, type CaseList, type CaseStatus } from '../types';
import { useApi } from '../use-api';

const PAGE_SIZE = 20;
const STATUS_OPTIONS = [{ value: '', label: 'All' }, ...CASE_STATUSES.map((s) => ({ value: s, label: s }))];

/** An alert's cases, newest first: filtered by status, paged, with the column values of each case's newest match. */
export function AlertCases({ alert }: { alert: Alert }) {
  const [status, setStatus] = useState<CaseStatus | ''>('');
  const [offset, setOffset] = useState(0);
  const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE_SIZE), ...(status ? { status } : {}) });
  const { data, error } = useApi<CaseList>(`/api/${encodeURIComponent(alert.sourceKey)}/alerts/${alert.id}/cases?${query}`);
  const total = data ? (status ? data.counts[status] : CASE_STATUSES.reduce((sum, s) => sum + data.counts[s], 0)) : 0;

  return (
    <section aria-labelledby="cases" class="card">
      <div class="section-head">
        <h2 id="cases">Cases</h2>
        <SelectField
          label="Status"
          options={STATUS_OPTIONS.map((o) => ({ ...o, label: o.value && data ? `${o.label} (${data.counts[o.value as CaseStatus]})` : o.label }))}
          value={status}
          onChange={(e) => {
            setStatus(e.currentTarget.value as CaseStatus | '');
            setOffset(0);
          }}
        />
      </div>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {data === undefined ? (
        error ? null : <p class="loading">Loading…</p>
      ) : data.cases.length === 0 ? (
        <p>No {status || ''} case{status ? '' : ' yet: a run opens one for each new target it finds'}.</p>
      ) : (
        <table class="data" aria-labelledby="cases">
          <thead>
            <tr>
              <th scope="col">Case</th>
              <th scope="col">Status</th>
              <th scope="col">Target</th>
              <th scope="col">Matches</th>
              {alert.columns.map((c) => (
                <th key={c.columnName} scope="col">
                  {c.columnTitle}
                </th>
              ))}
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {data.cases.map((kase) => (
              <tr key={kase.id}>
                <td>
                  <Link href={`/alerts/${alert.id}/case/${kase.id}`}>Case {kase.id}</Link>
                </td>
                <td>
                  <StatusBadge status={kase.status} />
                  {kase.user ? <div class="muted">by {kase.user.username}</div> : null}
                  {kase.assignedUser ? <div class="muted">assigned to {kase.assignedUser.username}</div> : null}
                </td>
                <td class="muted">
                  {kase.nodes.length} node{kase.nodes.length === 1 ? '' : 's'}, {kase.edges.length} edge{kase.edges.length === 1 ? '' : 's'}
                </td>
                <td class="num">{kase.matchCount}</td>
                {alert.columns.map((c) => (
                  <td key={c.columnName}>{formatValue(kase.columns?.[c.columnName])}</td>
                ))}
                <td title={formatTime(kase.createdAt)}>{formatAgo(kase.createdAt)}</td>
                <td title={formatTime(kase.updatedAt)}>{formatAgo(kase.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data ? <Pager label="Cases pages" offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} /> : null}
    </section>
  );
}
