import { useState } from 'preact/hooks';
import { ApiError, del, get, messageOf, post } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { describeEvents } from '../components/events-picker';
import { Link } from '../components/link';
import { EnabledBadge, Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { navigate } from '../router';
import type { DataSource, Delivery, Page, Webhook } from '../types';
import { useApi } from '../use-api';
import { Deliveries } from './deliveries';
import { EditWebhook, EnableToggle, RotateSecret } from './webhook-lifecycle';

/** One webhook: what it is, edit, enable/disable, rotate its secret, ping, delete, and its deliveries. */
export function WebhookPage({ id }: { id: string }) {
  const loaded = useApi<Webhook>(`/api/admin/webhooks/${encodeURIComponent(id)}`);
  const sources = useApi<DataSource[]>('/api/dataSources').data ?? [];
  const { data: webhook, error, setData: setWebhook } = loaded;

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
          <EnableToggle webhook={webhook} onChanged={setWebhook} />
          <Ping webhookId={webhook.id} />
          <Delete webhook={webhook} />
          {/* Last in the row: opened, each takes the row's whole width below the buttons (.panel). */}
          <EditWebhook webhook={webhook} sources={sources} onSaved={setWebhook} />
          <RotateSecret webhook={webhook} onRotated={loaded.reload} />
        </div>
      </section>
      <Deliveries webhookId={webhook.id} />
    </>
  );
}

function Ping({ webhookId }: { webhookId: number }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const ping = async () => {
    setBusy(true);
    setOutcome(undefined);
    try {
      const delivery = await post<Delivery>(`/api/admin/webhooks/${webhookId}/ping`);
      const took = delivery.attemptLog?.[0]?.durationMs;
      const answer = delivery.responseStatus ? `the receiver answered ${delivery.responseStatus}` : 'no answer';
      setOutcome(
        delivery.status === 'sent'
          ? { ok: true, text: `Ping delivered: ${answer}${took === undefined ? '' : ` in ${took} ms`}.` }
          : { ok: false, text: `Ping failed: ${delivery.error ?? answer}${delivery.error && delivery.responseStatus ? ` (${answer})` : ''}.` },
      );
    } catch (err) {
      setOutcome({ ok: false, text: `Ping failed: ${messageOf(err)}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="inline-action">
      <button type="button" disabled={busy} onClick={() => void ping()}>
        {busy ? 'Pinging…' : 'Send ping'}
      </button>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
    </div>
  );
}

function Delete({ webhook }: { webhook: Webhook }) {
  const [count, setCount] = useState<number>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const ask = async () => {
    setError(undefined);
    try {
      setCount((await get<Page<Delivery>>(`/api/admin/webhooks/${webhook.id}/deliveries?limit=1`)).totalCount);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await del(`/api/admin/webhooks/${webhook.id}`);
      navigate('/webhooks');
    } catch (err) {
      setError(messageOf(err));
      setCount(undefined);
      setBusy(false);
    }
  };
  const deliveries = count === 1 ? '1 delivery' : `${count} deliveries`;
  return (
    <div class="inline-action">
      <button type="button" class="danger" onClick={() => void ask()}>
        Delete webhook
      </button>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {count !== undefined ? (
        <ConfirmDialog title="Delete this webhook?" confirmLabel={`Delete webhook and ${deliveries}`} busy={busy} onConfirm={() => void remove()} onCancel={() => setCount(undefined)}>
          <p>
            The webhook to <span class="url">{webhook.url}</span> stops receiving events, and its {deliveries} go with it. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
