import { useState } from 'preact/hooks';
import { alertPath } from '../alerts/alert-words';
import { CursorPager } from '../components/cursor-pager';
import { DateTimeField } from '../components/date-time-field';
import { Field, SelectField } from '../components/field';
import { Link } from '../components/link';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { groupPath } from '../groups/group-paths';
import { navigate } from '../router';
import { AUDIT_TARGETS, type AuditEntry, type AuditPage as AuditAnswer, type AuditTarget, type DataSource, type User } from '../types';
import { useApi } from '../use-api';
import { CHANGE_MARK, describeChange } from './audit-words';

const AUDIT_PATH = '/audit';
const PAGE_SIZE = 50;
const TARGET_LABELS: Record<AuditTarget, string> = {
  alert: 'Alert',
  case: 'Case',
  group: 'Group',
  accessRights: 'Access rights of a group',
  accessRightsSettings: 'Access rights settings of a data source',
};
const FILTER_NAMES = ['targetType', 'targetId', 'userId', 'sourceKey', 'action', 'from', 'to'] as const;
type Filters = Partial<Record<(typeof FILTER_NAMES)[number], string>>;

/**
 * `/audit`: who changed what on alerts, cases, groups and access rights (GET /api/admin/audit), newest first, a page
 * at a time; each entry's before and after read as the fields that changed. The URL holds the filters and the cursor.
 */
export function AuditPage({ query }: { query: URLSearchParams }) {
  const api = new URLSearchParams();
  for (const [name, value] of query) if (value) api.set(name, value);
  api.set('limit', String(PAGE_SIZE));
  const page = useApi<AuditAnswer>(`/api/admin/audit?${api}`);
  const users = useApi<{ items: User[] }>('/api/admin/users');
  const sources = useApi<DataSource[]>('/api/dataSources');
  const filtered = [...query.keys()].some((k) => k !== 'cursor');

  return (
    <>
      <PageTitle title="Audit log">Audit log</PageTitle>
      <AuditFilters key={query.toString()} query={query} users={users.data?.items ?? []} sources={sources.data ?? []} />
      <section aria-labelledby="audit-entries" class="card">
        <div class="section-head">
          <h2 id="audit-entries">{filtered ? 'Entries found' : 'Every entry'}</h2>
          <span class="muted">Newest first</span>
        </div>
        {page.error ? <Notice kind="error">{page.error.message}</Notice> : null}
        {page.data === undefined ? (
          page.error ? null : <p class="loading">Loading…</p>
        ) : page.data.items.length === 0 ? (
          <p>No entry{filtered ? ' matches these filters' : query.has('cursor') ? ' on this page' : ' yet: changes to alerts, cases, groups and access rights appear here'}.</p>
        ) : (
          <table class="data audit" aria-label="Audit entries">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {page.data.items.map((entry) => (
                <AuditRow key={entry.id} entry={entry} sources={sources.data ?? []} users={users.data?.items ?? []} />
              ))}
            </tbody>
          </table>
        )}
        <CursorPager label="Audit pages" path={AUDIT_PATH} query={query} nextCursor={page.data?.nextCursor} />
      </section>
    </>
  );
}

function AuditRow({ entry, sources, users }: { entry: AuditEntry; sources: DataSource[]; users: User[] }) {
  // A case's alert is recorded for its link (TargetLink), not as a change.
  const lines = describeChange(entry.before, entry.after, (id) => users.find((u) => u.id === id)?.username).filter((line) => !(entry.targetType === 'case' && line.field === 'alertId'));
  const source = entry.sourceKey ? (sources.find((s) => s.key === entry.sourceKey)?.name ?? entry.sourceKey) : undefined;
  return (
    <tr>
      <td>{formatTime(entry.at)}</td>
      <td>
        {entry.user ? entry.user.username : <span class="muted">the service</span>}
        {entry.application ? <div class="muted">API key {entry.application.name}</div> : null}
      </td>
      <td>
        <code>{entry.action}</code>
      </td>
      <td>
        <TargetLink entry={entry} />
        {source ? <div class="muted">{source}</div> : null}
      </td>
      <td class="change">
        {lines.length === 0 ? (
          <span class="muted">{entry.before === undefined && entry.after === undefined ? 'no detail' : 'nothing changed'}</span>
        ) : (
          <ul class="changes">
            {lines.map((line, i) => (
              <li key={i} class={`change-${line.kind}`}>
                {CHANGE_MARK[line.kind]}
                {line.field ? <strong>{line.field}</strong> : null}
                {line.field ? ': ' : ''}
                <code>{line.text}</code>
              </li>
            ))}
          </ul>
        )}
      </td>
    </tr>
  );
}

/** The target named, and linked to its page when it has one (a case's alert is in what the entry recorded). */
function TargetLink({ entry }: { entry: AuditEntry }) {
  const label = `${entry.targetType} ${entry.targetId}`;
  const recorded = { ...(entry.before as object | undefined), ...(entry.after as object | undefined) } as { alertId?: unknown };
  if (entry.targetType === 'alert' && entry.sourceKey && entry.action !== 'alert.delete') return <Link href={alertPath(entry.sourceKey, entry.targetId)}>{label}</Link>;
  if (entry.targetType === 'case' && typeof recorded.alertId === 'number') return <Link href={`/alerts/${recorded.alertId}/case/${entry.targetId}`}>{label}</Link>;
  if ((entry.targetType === 'group' || entry.targetType === 'accessRights') && entry.sourceKey && entry.action !== 'group.delete') {
    return <Link href={groupPath(entry.sourceKey, entry.targetId)}>{label}</Link>;
  }
  return <>{label}</>;
}

function AuditFilters({ query, users, sources }: { query: URLSearchParams; users: User[]; sources: DataSource[] }) {
  const [values, setValues] = useState<Filters>(() => Object.fromEntries(FILTER_NAMES.map((name) => [name, query.get(name) ?? ''])));
  const set = (name: keyof Filters, value: string) => setValues((v) => ({ ...v, [name]: value }));
  const submit = (e: Event) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTER_NAMES) {
      const value = values[name]?.trim();
      if (value) next.set(name, value);
    }
    navigate(next.size > 0 ? `${AUDIT_PATH}?${next}` : AUDIT_PATH);
  };
  return (
    <section aria-labelledby="audit-filters" class="card">
      <h2 id="audit-filters">Filters</h2>
      <form class="filters top" onSubmit={submit} noValidate>
        <SelectField
          label="About"
          value={values.targetType ?? ''}
          options={[{ value: '', label: 'Anything' }, ...AUDIT_TARGETS.map((t) => ({ value: t, label: TARGET_LABELS[t] }))]}
          onChange={(e) => set('targetType', e.currentTarget.value)}
        />
        <Field label="Its id" inputMode="numeric" value={values.targetId ?? ''} hint="with “About”: an alert, case or group id" onInput={(e) => set('targetId', e.currentTarget.value)} />
        <SelectField
          label="Who"
          value={values.userId ?? ''}
          options={[{ value: '', label: 'Anyone' }, ...users.map((u) => ({ value: String(u.id), label: u.username }))]}
          onChange={(e) => set('userId', e.currentTarget.value)}
        />
        <SelectField
          label="Data source"
          value={values.sourceKey ?? ''}
          options={[{ value: '', label: 'Any' }, ...sources.map((s) => ({ value: s.key, label: s.name }))]}
          onChange={(e) => set('sourceKey', e.currentTarget.value)}
        />
        <Field label="Action" spellcheck={false} value={values.action ?? ''} hint="one action, such as case.status or group.delete" onInput={(e) => set('action', e.currentTarget.value)} />
        <DateTimeField label="From" value={values.from ?? ''} onChange={(iso) => set('from', iso)} />
        <DateTimeField label="Until" value={values.to ?? ''} onChange={(iso) => set('to', iso)} />
        <div class="filter-actions">
          <button type="submit">Search</button>
          <button type="button" class="secondary" onClick={() => navigate(AUDIT_PATH)}>
            Clear
          </button>
        </div>
      </form>
    </section>
  );
}
