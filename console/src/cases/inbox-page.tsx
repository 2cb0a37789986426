import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api';
import { CursorPager } from '../components/cursor-pager';
import { Link } from '../components/link';
import { Notice, StatusBadge } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatAgo, formatTime, formatValue } from '../format';
import { useSession } from '../session';
import type { InboxCase, InboxPage as InboxAnswer } from '../types';
import { useApi } from '../use-api';
import { assignCases } from './assign';
import { InboxActions } from './inbox-actions';
import { sourceName, useCatalogue, type Catalogue } from './inbox-catalogue';
import { InboxFilterForm } from './inbox-filters';
import { INBOX_PATH, inboxApiPath, isFiltered } from './inbox-query';

/**
 * `/cases`, the inbox: every case the user may read, across alerts and data sources (GET /api/cases), filtered and
 * sorted as the URL says, a page at a time; cases picked with their boxes are changed or assigned at once.
 */
export function InboxPage({ query }: { query: URLSearchParams }) {
  const catalogue = useCatalogue();
  const list = useApi<InboxAnswer>(inboxApiPath(query));
  // The selection is of the cases shown: another page or other filters start a new one.
  const view = query.toString();
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  useEffect(() => setSelected(new Set()), [view]);
  const items = list.data?.items ?? [];
  // The selected cases as the list shows them now (their status and assignee after a change and reload).
  const picked = items.filter((c) => selected.has(c.id));
  const alertId = query.get('alertId');
  const alert = alertId ? catalogue.data?.alerts.find((a) => String(a.id) === alertId) : undefined;

  const toggle = (kase: InboxCase) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(kase.id)) next.delete(kase.id);
      else next.add(kase.id);
      return next;
    });
  const allPicked = items.length > 0 && picked.length === items.length;
  const toggleAll = () => setSelected(allPicked ? new Set() : new Set(items.map((c) => c.id)));

  return (
    <>
      <PageTitle title="Case inbox">Case inbox</PageTitle>
      {catalogue.error ? <Notice kind="error">{catalogue.error.message}</Notice> : null}
      <InboxFilterForm key={view} query={query} catalogue={catalogue.data} />
      <section aria-labelledby="inbox-cases" class="card">
        <div class="section-head">
          <h2 id="inbox-cases">{isFiltered(query) ? 'Cases found' : 'Every case you may read'}</h2>
          <button type="button" class="secondary small at-end" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
        </div>
        <InboxActions selected={picked} onDone={list.reload} />
        {list.error ? <Notice kind="error">{list.error.message}</Notice> : null}
        {list.data === undefined ? (
          list.error ? null : <p class="loading">Loading…</p>
        ) : items.length === 0 ? (
          <p>{isFiltered(query) ? 'No case matches these filters.' : query.has('cursor') ? 'No more cases.' : 'No case yet: an alert opens one for each new target it finds.'}</p>
        ) : (
          <table class="data inbox" aria-label="Cases">
            <thead>
              <tr>
                <th scope="col">
                  <input type="checkbox" aria-label="Select every case of this page" checked={allPicked} onChange={toggleAll} />
                </th>
                <th scope="col">Case</th>
                <th scope="col">Alert</th>
                <th scope="col">Status</th>
                <th scope="col">Assigned to</th>
                <th scope="col">Matches</th>
                {alert?.columns.map((c) => (
                  <th key={c.columnName} scope="col">
                    {c.columnTitle}
                  </th>
                ))}
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {items.map((kase) => (
                <InboxRow key={kase.id} kase={kase} catalogue={catalogue.data} columns={alert?.columns.map((c) => c.columnName)} picked={selected.has(kase.id)} onToggle={() => toggle(kase)} onAssigned={list.reload} />
              ))}
            </tbody>
          </table>
        )}
        <CursorPager label="Inbox pages" path={INBOX_PATH} query={query} nextCursor={list.data?.nextCursor} />
      </section>
    </>
  );
}

function InboxRow({
  kase,
  catalogue,
  columns,
  picked,
  onToggle,
  onAssigned,
}: {
  kase: InboxCase;
  catalogue: Catalogue | undefined;
  columns: string[] | undefined;
  picked: boolean;
  onToggle: () => void;
  onAssigned: () => void;
}) {
  const { user } = useSession();
  const [assignError, setAssignError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const mine = kase.assignedUser?.id === user.id;
  const takeIt = async () => {
    setBusy(true);
    setAssignError(undefined);
    try {
      await assignCases([kase], user.id);
      onAssigned();
    } catch (err) {
      setAssignError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <tr class={picked ? 'selected' : ''}>
      <td>
        <input type="checkbox" aria-label={`Select case ${kase.id}`} checked={picked} onChange={onToggle} />
      </td>
      <td>
        <Link href={`/alerts/${kase.alertId}/case/${kase.id}`}>Case {kase.id}</Link>
      </td>
      <td>
        {kase.alertTitle}
        <div class="muted">{sourceName(catalogue, kase.sourceKey)}</div>
      </td>
      <td>
        <StatusBadge status={kase.status} />
        {kase.user && kase.status !== 'unconfirmed' ? <div class="muted">by {kase.user.username}</div> : null}
      </td>
      <td>
        {kase.assignedUser ? mine ? <strong>you</strong> : kase.assignedUser.username : <span class="muted">nobody</span>}
        {mine ? null : (
          <div>
            <button type="button" class="secondary small" aria-label={`Assign case ${kase.id} to me`} disabled={busy} onClick={() => void takeIt()}>
              Assign to me
            </button>
          </div>
        )}
        {assignError ? <p class="field-error">{assignError}</p> : null}
      </td>
      <td class="num">{kase.matchCount}</td>
      {columns?.map((name) => (
        <td key={name}>{formatValue(kase.columns[name])}</td>
      ))}
      <td title={formatTime(kase.createdAt)}>{formatAgo(kase.createdAt)}</td>
      <td title={formatTime(kase.updatedAt)}>{formatAgo(kase.updatedAt)}</td>
    </tr>
  );
}
