import { useState } from 'preact/hooks';
import { DateTimeField } from '../components/date-time-field';
import { Field, SelectField } from '../components/field';
import { Link } from '../components/link';
import { Notice, StatusBadge } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatAgo, formatTime } from '../format';
import { navigate } from '../router';
import { DELIVERY_STATUSES, EVENT_TYPES, type Delivery, type DeliverySearchFilters } from '../types';
import { useApi } from '../use-api';
import { DeliveryDetail } from './delivery';

/** The filters as the page's URL and the API's query string both spell them: a search is a link to share. */
type FilterName = Exclude<keyof DeliverySearchFilters, 'cursor' | 'limit'>;
const FILTERS: { name: FilterName; label: string; hint?: string }[] = [
  { name: 'webhookId', label: 'Webhook id' },
  { name: 'caseId', label: 'Case id' },
  { name: 'alertId', label: 'Alert id' },
  { name: 'deliveryId', label: 'webhook-id', hint: 'the delivery id a receiver got in its webhook-id header' },
  { name: 'responseStatus', label: 'Answer status', hint: 'the HTTP status of the last answer, such as 500' },
];
const PAGE_SIZE = 25;
const REFRESH_MS = 5000;

const EVENT_OPTIONS = [{ value: '', label: 'Any' }, ...[...EVENT_TYPES, 'ping'].map((t) => ({ value: t, label: t }))];
const STATUS_OPTIONS = [{ value: '', label: 'Any' }, ...DELIVERY_STATUSES.map((s) => ({ value: s, label: s }))];

interface SearchPage {
  items: Delivery[];
  nextCursor: string | null;
}

/**
 * Deliveries of every webhook, found by any of their filters (GET /api/admin/deliveries), newest first, a page at a
 * time. The URL holds the filters and the page's cursor, so the address bar is the search to share.
 */
export function SearchPage({ query }: { query: URLSearchParams }) {
  const apiQuery = new URLSearchParams();
  for (const [name, value] of query) if (value) apiQuery.set(name, value);
  apiQuery.set('limit', String(PAGE_SIZE));
  const found = useApi<SearchPage>(`/api/admin/deliveries?${apiQuery}`, { refreshMs: query.has('cursor') ? undefined : REFRESH_MS });
  const [openId, setOpenId] = useState<{ webhookId: number; id: number }>();
  const filtered = [...query.keys()].some((k) => k !== 'cursor');

  return (
    <>
      <PageTitle title="Search deliveries">Search deliveries</PageTitle>
      <Filters key={query.toString()} query={query} />
      <section aria-labelledby="results" class="card">
        <div class="section-head">
          <h2 id="results">{filtered ? 'Deliveries found' : 'Every delivery'}</h2>
          <span class="muted">Newest first{query.has('since') || query.has('until') ? ' (by the time of their event)' : ''}</span>
        </div>
        {found.error ? <Notice kind="error">{found.error.message}</Notice> : null}
        {found.data === undefined ? (
          found.error ? null : <p class="loading">Loading…</p>
        ) : found.data.items.length === 0 ? (
          <p>No delivery matches{query.has('cursor') ? ' on this page' : ''}.</p>
        ) : (
          <div class="scroll">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Delivery</th>
                  <th scope="col">Webhook</th>
                  <th scope="col">Event</th>
                  <th scope="col">Case</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {found.data.items.map((d) => {
                  const about = caseOf(d);
                  const open = openId?.id === d.id;
                  return (
                    <tr key={d.id} class={open ? 'selected' : ''}>
                      <td>
                        <button type="button" class="link" aria-label={`Open delivery ${d.id}`} aria-expanded={open} onClick={() => setOpenId(open ? undefined : { webhookId: d.webhookId, id: d.id })}>
                          #{d.id}
                        </button>
                      </td>
                      <td>
                        <Link href={`/webhooks/${d.webhookId}`}>#{d.webhookId}</Link>
                      </td>
                      <td>
                        <code>{d.payload.eventType}</code>
                      </td>
                      <td>{about ? <Link href={`/alerts/${about.alertId}/case/${about.caseId}`}>{`alert ${about.alertId}, case ${about.caseId}`}</Link> : '—'}</td>
                      <td>
                        <StatusBadge status={d.status} />
                      </td>
                      <td class="num">{d.attempts}</td>
                      <td>{d.responseStatus ?? d.error ?? '—'}</td>
                      <td title={formatTime(d.createdAt)}>{formatAgo(d.createdAt)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <nav class="pager" aria-label="Search pages">
          <button type="button" class="secondary" disabled={!query.has('cursor')} onClick={() => navigate(withCursor(query, null))}>
            Newest
          </button>
          <button type="button" class="secondary" disabled={!found.data?.nextCursor} onClick={() => navigate(withCursor(query, found.data!.nextCursor))}>
            Next page
          </button>
        </nav>
        {openId ? (
          <DeliveryDetail key={openId.id} webhookId={openId.webhookId} deliveryId={openId.id} refreshMs={REFRESH_MS} onChanged={found.reload} onClose={() => setOpenId(undefined)} />
        ) : null}
      </section>
    </>
  );
}

function withCursor(query: URLSearchParams, cursor: string | null): string {
  const next = new URLSearchParams(query);
  if (cursor === null) next.delete('cursor');
  else next.set('cursor', cursor);
  return `/deliveries?${next}`;
}

function caseOf(delivery: Delivery): { alertId: number; caseId: number } | undefined {
  const data = delivery.payload.data as { alert?: { id?: unknown }; case?: { id?: unknown } };
  const alertId = data.alert?.id;
  const caseId = data.case?.id;
  return typeof alertId === 'number' && typeof caseId === 'number' ? { alertId, caseId } : undefined;
}

/** The filters, filled from the URL; searching puts them in the URL (a new history entry), from the first page. */
function Filters({ query }: { query: URLSearchParams }) {
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(query));
  const set = (name: string, value: string) => setValues((v) => ({ ...v, [name]: value }));
  const submit = (e: Event) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) if (name !== 'cursor' && value.trim()) next.set(name, value.trim());
    navigate(`/deliveries${next.size > 0 ? `?${next}` : ''}`);
  };
  return (
    <section aria-labelledby="filters" class="card">
      <h2 id="filters">Filters</h2>
      <form class="filters" onSubmit={submit} noValidate>
        <SelectField label="Event type" options={EVENT_OPTIONS} value={values.eventType ?? ''} onChange={(e) => set('eventType', e.currentTarget.value)} />
        <SelectField label="Delivery status" options={STATUS_OPTIONS} value={values.status ?? ''} onChange={(e) => set('status', e.currentTarget.value)} />
        {FILTERS.map((f) => (
          <Field key={f.name} label={f.label} inputMode="numeric" hint={f.hint} value={values[f.name] ?? ''} onInput={(e) => set(f.name, e.currentTarget.value)} />
        ))}
        <DateTimeField label="Since" value={values.since ?? ''} onChange={(iso) => set('since', iso)} />
        <DateTimeField label="Until" value={values.until ?? ''} onChange={(iso) => set('until', iso)} />
        <div class="filter-actions">
          <button type="submit">Search</button>
          <button type="button" class="secondary" onClick={() => navigate('/deliveries')}>
            Clear
          </button>
        </div>
      </form>
    </section>
  );
}

