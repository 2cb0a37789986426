import { useId, useState } from 'preact/hooks';
import { ApiError, del, get, messageOf, post } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { describeEvents } from '../components/events-picker';
import { Link } from '../components/link';
import { EnabledBadge, Notice, OutcomeSlot, type Outcome } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { navigate } from '../router';
import { EVENT_TYPES, type DataSource, type Delivery, type EventType, type Page, type Webhook } from '../types';
import { useApi } from '../use-api';
import { HealthChart } from '../components/health-chart';
import { Deliveries } from '../deliveries/deliveries';
import { EditWebhook, EnableToggle, RotateSecret } from './webhook-lifecycle';

/** One webhook: what it is, edit, enable/disable, rotate its secret, ping, delete, and its deliveries. */
export function WebhookPage({ id }: { id: string }) {
  const loaded = useApi<Webhook>(`/api/admin/webhooks/${encodeURIComponent(id)}`);
  const sources = useApi<DataSource[]>('/api/dataSources').data ?? [];
  const { data: webhook, error, setData: setWebhook } = loaded;
  const [outcome, setOutcome] = useState<Outcome>();

  // An id that is not a number answers 400, one that names no webhook 404: both are "not found" here.
  const notFound = error instanceof ApiError && (error.status === 404 || error.status === 400);
  if (error && !notFound) return <Notice kind="error">{error.message}</Notice>;
  if (webhook === undefined && !notFound) return <p class="loading">Loading…</p>;
  if (webhook === undefined) {
    return (
      <section>
        <PageTitle title="Webhook not found">Webhook not found</PageTitle>
        <p>
          No webhook has the id {id}. <Link href="/webhooks">Back to the webhooks</Link>
        </p>
      </section>
    );
  }

  return (
    <>
      <p class="crumbs">
        <Link href="/webhooks">Webhooks</Link> / #{webhook.id}
      </p>
      <PageTitle title={`Webhook ${webhook.id}`}>
        Webhook <span class="url">{webhook.url}</span>
      </PageTitle>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <EnabledBadge webhook={webhook} />
          {webhook.disabledAt ? <span class="muted"> since {formatTime(webhook.disabledAt)}</span> : null}
        </dd>
        <dt>Description</dt>
        <dd>{webhook.description || <span class="muted">none</span>}</dd>
        <dt>Events</dt>
        <dd>{describeEvents(webhook.events, sources)}</dd>
        <dt>Created</dt>
        <dd>{formatTime(webhook.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(webhook.updatedAt)}</dd>
        {webhook.previousSecretExpiresAt ? (
          <>
            <dt>Previous secret</dt>
            <dd>signs too until {formatTime(webhook.previousSecretExpiresAt)}</dd>
          </>
        ) : null}
      </dl>
      <section aria-labelledby="webhook-actions" class="card">
        <h2 id="webhook-actions">Actions</h2>
        <div class="actions">
          <EnableToggle webhook={webhook} onChanged={setWebhook} onOutcome={setOutcome} />
          <Ping webhookId={webhook.id} onOutcome={setOutcome} />
          <SendExample webhookId={webhook.id} onOutcome={setOutcome} />
          <Delete webhook={webhook} onOutcome={setOutcome} />
          {/* Last in the row: opened, each takes the row's whole width below the buttons (.panel). */}
          <EditWebhook webhook={webhook} sources={sources} onSaved={setWebhook} onOutcome={setOutcome} />
          <RotateSecret webhook={webhook} onRotated={loaded.reload} onOutcome={setOutcome} />
        </div>
        {/* Every action of the row tells its outcome here, below the row: no message moves a button. */}
        <OutcomeSlot outcome={outcome} />
      </section>
      <HealthChart webhookId={webhook.id} />
      <Deliveries webhookId={webhook.id} />
    </>
  );
}

/** "Ping delivered: the receiver answered 204 in 12 ms." or why it failed. */
function describeTest(what: string, delivery: Delivery): Outcome {
  const took = delivery.attemptLog?.at(-1)?.durationMs;
  const answer = delivery.responseStatus ? `the receiver answered ${delivery.responseStatus}` : 'no answer';
  return delivery.status === 'sent'
    ? { kind: 'success', text: `${what} delivered: ${answer}${took === undefined ? '' : ` in ${took} ms`}.` }
    : { kind: 'error', text: `${what} failed: ${delivery.error ?? answer}${delivery.error && delivery.responseStatus ? ` (${answer})` : ''}.` };
}

function Ping({ webhookId, onOutcome }: { webhookId: number; onOutcome: (outcome: Outcome | undefined) => void }) {
  const [busy, setBusy] = useState(false);
  const ping = async () => {
    setBusy(true);
    onOutcome(undefined);
    try {
      onOutcome(describeTest('Ping', await post<Delivery>(`/api/admin/webhooks/${webhookId}/ping`)));
    } catch (err) {
      onOutcome({ kind: 'error', text: `Ping failed: ${messageOf(err)}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" disabled={busy} onClick={() => void ping()}>
      {busy ? 'Pinging…' : 'Send ping'}
    </button>
  );
}

/** The documented example of one event type, sent now like a ping, whatever the webhook subscribes to. */
function SendExample({ webhookId, onOutcome }: { webhookId: number; onOutcome: (outcome: Outcome | undefined) => void }) {
  const [eventType, setEventType] = useState<EventType>('newCase');
  const [busy, setBusy] = useState(false);
  const id = useId();
  const send = async () => {
    setBusy(true);
    onOutcome(undefined);
    try {
      onOutcome(describeTest(`Example ${eventType}`, await post<Delivery>(`/api/admin/webhooks/${webhookId}/example`, { eventType })));
    } catch (err) {
      onOutcome({ kind: 'error', text: `Example ${eventType} failed: ${messageOf(err)}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="inline-action">
      <label for={id}>Example of</label>
      <select id={id} value={eventType} onChange={(e) => setEventType(e.currentTarget.value as EventType)}>
        {EVENT_TYPES.map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
      <button type="button" class="secondary" disabled={busy} onClick={() => void send()}>
        Send example
      </button>
    </div>
  );
}

function Delete({ webhook, onOutcome }: { webhook: Webhook; onOutcome: (outcome: Outcome | undefined) => void }) {
  const [count, setCount] = useState<number>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const ask = async () => {
    onOutcome(undefined);
    try {
      setCount((await get<Page<Delivery>>(`/api/admin/webhooks/${webhook.id}/deliveries?limit=1`)).totalCount);
    } catch (err) {
      onOutcome({ kind: 'error', text: messageOf(err) });
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await del(`/api/admin/webhooks/${webhook.id}`);
      navigate('/webhooks');
    } catch (err) {
      // Shown in the dialog, which stays open to try again or cancel.
      setError(messageOf(err));
      setBusy(false);
    }
  };
  const deliveries = count === 1 ? '1 delivery' : `${count} deliveries`;
  return (
    <>
      <button type="button" class="danger" onClick={() => void ask()}>
        Delete webhook
      </button>
      {count !== undefined ? (
        <ConfirmDialog
          title="Delete this webhook?"
          confirmLabel={`Delete webhook and ${deliveries}`}
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => (setCount(undefined), setError(undefined))}
        >
          <p>
            The webhook to <span class="url">{webhook.url}</span> stops receiving events, and its {deliveries} go with it. This cannot be undone.
          </p>
          {error ? <Notice kind="error">{error}</Notice> : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
}
