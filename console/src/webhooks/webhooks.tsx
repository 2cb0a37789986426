import { useState } from 'preact/hooks';
import { ApiError, fieldOf, messageOf, post } from '../api';
import { allEvents, describeEvents, EventsField, toEvents } from '../components/events-picker';
import { Field, SecretField } from '../components/field';
import { Link } from '../components/link';
import { EnabledBadge, Notice, StatusBadge } from '../components/notice';
import { HealthChart } from '../components/health-chart';
import { PageTitle } from '../components/page';
import { formatAgo, formatTime } from '../format';
import { navigate } from '../router';
import { generateSecret } from '../secret';
import type { DataSource, DeliveryHealth, Webhook, WebhookListItem } from '../types';
import { useApi } from '../use-api';

const PAGE_SIZE = 100;

/**
 * Every webhook with its health at a glance, a page at a time, found by URL or description; the deliveries of all
 * of them over time; and the form that creates one. The search and the page are in the URL (`?q=…&page=2`).
 */
export function WebhooksPage({ query }: { query: URLSearchParams }) {
  const q = query.get('q') ?? '';
  const page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  // One request for the whole table: the list answers each webhook's delivery health along with it.
  const listQuery = new URLSearchParams({ health: 'true', limit: String(PAGE_SIZE), offset: String((page - 1) * PAGE_SIZE), ...(q ? { q } : {}) });
  const list = useApi<{ totalCount: number; items: WebhookListItem[] }>(`/api/admin/webhooks?${listQuery}`);
  const sourceList = useApi<DataSource[]>('/api/dataSources');
  const [created, setCreated] = useState<Webhook>();
  const webhooks = list.data?.items;
  const total = list.data?.totalCount ?? 0;
  const sources = sourceList.data ?? [];
  const error = list.error ?? sourceList.error;
  const pageUrl = (n: number) => `/webhooks?${new URLSearchParams({ ...(q ? { q } : {}), ...(n > 1 ? { page: String(n) } : {}) })}`;

  return (
    <>
      <PageTitle title="Webhooks">Webhooks</PageTitle>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      <HealthChart />
      <section aria-labelledby="webhooks-list" class="card">
        <div class="section-head">
          <h2 id="webhooks-list">Receivers</h2>
          <SearchWebhooks key={q} q={q} />
        </div>
        {webhooks === undefined ? (
          <p class="loading">Loading…</p>
        ) : webhooks.length === 0 && q ? (
          <p>No webhook has “{q}” in its URL or description.</p>
        ) : webhooks.length === 0 ? (
          <FirstWebhook />
        ) : (
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Webhook</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Last delivery</th>
                <th scope="col">Pending</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link href={`/webhooks/${w.id}`} class="url">
                      {w.url}
                    </Link>
                    <div class="muted">#{w.id}</div>
                    {w.description ? <div>{w.description}</div> : null}
                  </td>
                  <td>{describeEvents(w.events, sources)}</td>
                  <td>
                    <EnabledBadge webhook={w} />
                  </td>
                  <Health health={w.health} failingSince={w.failingSince} />
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {total > PAGE_SIZE ? (
          <nav class="pager" aria-label="Webhooks pages">
            <button type="button" class="secondary" disabled={page === 1} onClick={() => navigate(pageUrl(page - 1))}>
              Previous page
            </button>
            <span>
              {(page - 1) * PAGE_SIZE + 1}–{Math.min(page * PAGE_SIZE, total)} of {total}
            </span>
            <button type="button" class="secondary" disabled={page * PAGE_SIZE >= total} onClick={() => navigate(pageUrl(page + 1))}>
              Next page
            </button>
          </nav>
        ) : null}
      </section>
      {created ? (
        <Notice kind="success">
          Webhook created: <Link href={`/webhooks/${created.id}`}>{created.url}</Link>
        </Notice>
      ) : null}
      <CreateWebhook
        sources={sources}
        onCreated={(webhook) => {
          setCreated(webhook);
          list.reload();
        }}
      />
    </>
  );
}

/** The search box: its text goes to the URL (a new history entry), which the list follows. */
function SearchWebhooks({ q }: { q: string }) {
  const [text, setText] = useState(q);
  return (
    <form
      role="search"
      class="inline-search"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(text.trim() ? `/webhooks?${new URLSearchParams({ q: text.trim() })}` : '/webhooks');
      }}
    >
      <label>
        Find webhooks <input type="search" placeholder="in URL or description" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <button type="submit" class="secondary">
        Find
      </button>
    </form>
  );
}

/** The newest delivery (its outcome and time), the pending and failed counts, and the failure streak. */
function Health({ health, failingSince }: { health: DeliveryHealth | undefined; failingSince: string | null }) {
  if (!health) return <td colSpan={3} class="muted">…</td>;
  return (
    <>
      <td>
        {health.lastDelivery ? (
          <>
            <StatusBadge status={health.lastDelivery.status} /> <span title={formatTime(health.lastDelivery.at)}>{formatAgo(health.lastDelivery.at)}</span>
            <div class="muted">{health.lastDelivery.eventType}</div>
            {failingSince ? (
              <div class="bad" title={formatTime(failingSince)}>
                failing since {formatAgo(failingSince)}
              </div>
            ) : null}
          </>
        ) : (
          <span class="muted">none yet</span>
        )}
      </td>
      <td class="num">{health.pending}</td>
      <td class={`num${health.failed > 0 ? ' bad' : ''}`}>{health.failed}</td>
    </>
  );
}

/** The empty list: how to make the first webhook, with a receiver to try it on. */
function FirstWebhook() {
  return (
    <div class="first-webhook">
      <p>
        <strong>No webhook yet.</strong> A webhook sends events (a new case, a new match, a case status change) as signed JSON POSTs to a receiver of yours. To make
        the first one:
      </p>
      <ol>
        <li>
          Have a receiver listening. To try things out, run the <Link href="/receiver-example">example receiver</Link> (<code>examples/receiver.ts</code>): it checks
          each delivery's signature and prints its event.
        </li>
        <li>
          Fill in <a href="#new-webhook">New webhook</a> below: the receiver's URL, and a secret (Generate makes one) that you give the receiver too.
        </li>
        <li>Open the webhook and press Send ping, or send an example of an event: its page shows what was sent and what the receiver answered.</li>
      </ol>
    </div>
  );
}

const FIELDS = ['url', 'secret', 'events'] as const;
type FieldName = (typeof FIELDS)[number];

function CreateWebhook({ sources, onCreated }: { sources: DataSource[]; onCreated: (webhook: Webhook) => void }) {
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState(allEvents);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const webhook = await post<Webhook>('/api/admin/webhooks', { url, secret, events: toEvents(events) });
      setUrl('');
      setSecret('');
      setEvents(allEvents());
      onCreated(webhook);
    } catch (err) {
      const message = messageOf(err);
      const field = err instanceof ApiError && err.key === 'dataSource_unavailable' ? 'events' : fieldOf(err, FIELDS);
      setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="new-webhook" class="card">
      <h2 id="new-webhook">New webhook</h2>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Field label="URL" type="url" placeholder="https://receiver.example.com/hook" value={url} error={errors.url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <SecretField
          value={secret}
          error={errors.secret}
          hint="Keys the signatures (X-Payload-HMAC, webhook-signature); give the same secret to the receiver: it is not shown again."
          onInput={(e) => setSecret(e.currentTarget.value)}
        >
          <button type="button" class="secondary" onClick={() => setSecret(generateSecret())}>
            Generate
          </button>
        </SecretField>
        <EventsField sources={sources} checked={events} onChange={setEvents} error={errors.events} />
        <button type="submit" disabled={busy}>
          Create webhook
        </button>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      </form>
    </section>
  );
}
