import { useId, useState } from 'preact/hooks';
import { DateTimeField } from '../components/date-time-field';
import { Field, SelectField } from '../components/field';
import { navigate } from '../router';
import { useSession } from '../session';
import { CASE_STATUSES, type AssignableUser, type CaseStatus } from '../types';
import { useApi } from '../use-api';
import { alertApiPath } from './assign';
import type { Catalogue } from './inbox-catalogue';
import { DATE_FILTERS, INBOX_PATH, filtersOf, inboxLink, type InboxFilters } from './inbox-query';

const SORTS = [
  { value: '', label: 'Last update' },
  { value: 'createdAt', label: 'Creation' },
  { value: 'id', label: 'Case number' },
];
const DIRECTIONS = [
  { value: '', label: 'Newest first' },
  { value: 'asc', label: 'Oldest first' },
];

/**
 * The inbox's filters, filled from the URL; applying them puts them in the URL (a new history entry), from the first
 * page. The alert's column values and users are offered once an alert is chosen: they are that alert's.
 */
export function InboxFilterForm({ query, catalogue }: { query: URLSearchParams; catalogue: Catalogue | undefined }) {
  const { user } = useSession();
  const [filters, setFilters] = useState<InboxFilters>(() => filtersOf(query));
  const set = <K extends keyof InboxFilters>(name: K, value: InboxFilters[K]) => setFilters((f) => ({ ...f, [name]: value }));
  const statusLegend = useId();

  const alerts = (catalogue?.alerts ?? []).filter((a) => !filters.sourceKey || a.sourceKey === filters.sourceKey);
  const alert = alerts.find((a) => String(a.id) === filters.alertId);
  const users = useApi<AssignableUser[]>(alert ? `${alertApiPath(alert.sourceKey, alert.id)}/users` : null);
  const sourceName = (key: string) => catalogue?.sources.find((s) => s.key === key)?.name ?? key;

  const toggleStatus = (status: CaseStatus) =>
    set('status', filters.status.includes(status) ? filters.status.filter((s) => s !== status) : CASE_STATUSES.filter((s) => s === status || filters.status.includes(s)));
  const assignees = [
    { value: '', label: 'Anyone or nobody' },
    { value: 'me', label: `Me (${user.username})` },
    { value: 'none', label: 'Nobody (unassigned)' },
    ...(alert ? (users.data ?? []).filter((u) => u.id !== user.id).map((u) => ({ value: String(u.id), label: u.username })) : []),
  ];
  // A user picked by id stays shown while the alert's users load (or when the alert is no longer chosen).
  if (filters.assignee && !assignees.some((a) => a.value === filters.assignee)) assignees.push({ value: filters.assignee, label: `User #${filters.assignee}` });

  const submit = (e: Event) => {
    e.preventDefault();
    navigate(inboxLink(filters));
  };
  return (
    <section aria-labelledby="inbox-filters" class="card">
      <h2 id="inbox-filters">Filters</h2>
      <form onSubmit={submit} noValidate>
        <fieldset class="checks" aria-labelledby={statusLegend}>
          <legend id={statusLegend}>Status (none checked: every status)</legend>
          {CASE_STATUSES.map((status) => (
            <label key={status}>
              <input type="checkbox" checked={filters.status.includes(status)} onChange={() => toggleStatus(status)} /> {status}
            </label>
          ))}
        </fieldset>
        <div class="filters top">
          <SelectField
            label="Data source"
            value={filters.sourceKey}
            options={[{ value: '', label: 'Any' }, ...(catalogue?.sources ?? []).map((s) => ({ value: s.key, label: s.name }))]}
            onChange={(e) => {
              const sourceKey = e.currentTarget.value;
              // The alert chosen stays only if it is of that source.
              setFilters((f) => ({ ...f, sourceKey, alertId: catalogue?.alerts.some((a) => String(a.id) === f.alertId && (!sourceKey || a.sourceKey === sourceKey)) ? f.alertId : '' }));
            }}
          />
          <SelectField
            label="Alert"
            value={filters.alertId}
            options={[
              { value: '', label: 'Any' },
              ...alerts.map((a) => ({ value: String(a.id), label: filters.sourceKey ? a.title : `${a.title} (${sourceName(a.sourceKey)})` })),
              ...(filters.alertId && !alert ? [{ value: filters.alertId, label: `Alert #${filters.alertId}` }] : []),
            ]}
            onChange={(e) => setFilters((f) => ({ ...f, alertId: e.currentTarget.value, columns: {} }))}
          />
          <SelectField label="Assigned to" value={filters.assignee} options={assignees} onChange={(e) => set('assignee', e.currentTarget.value)} />
          <SelectField label="Sort by" value={filters.sort} options={SORTS} onChange={(e) => set('sort', e.currentTarget.value)} />
          <SelectField label="Order" value={filters.direction} options={DIRECTIONS} onChange={(e) => set('direction', e.currentTarget.value)} />
          {alert?.columns.map((c) => (
            <Field
              key={c.columnName}
              label={`Column: ${c.columnTitle}`}
              value={filters.columns[c.columnName] ?? ''}
              hint={c.type === 'number' ? 'the exact number' : 'the exact value'}
              onInput={(e) => set('columns', { ...filters.columns, [c.columnName]: e.currentTarget.value })}
            />
          ))}
        </div>
        {/* Dates are the least used: folded away unless the view has one. */}
        <details class="more-filters" open={DATE_FILTERS.some((f) => query.has(f.name))}>
          <summary>Dates</summary>
          <div class="filters top">
            {DATE_FILTERS.map((f) => (
              <DateTimeField key={f.name} label={f.label} value={filters[f.name]} onChange={(iso) => set(f.name, iso)} />
            ))}
          </div>
        </details>
        <div class="filter-actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={() => navigate(INBOX_PATH)}>
            Clear filters
          </button>
        </div>
      </form>
    </section>
  );
}
