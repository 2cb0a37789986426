import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { CopyButton } from '../components/copy-button';
import { Notice, StatusBadge } from '../components/notice';
import { formatTime } from '../format';
import type { Delivery } from '../types';
import { useApi } from '../use-api';

/** One delivery opened: its payload, the headers it is sent with, its attempt log, and redelivery. */
export function DeliveryDetail({
  webhookId,
  deliveryId,
  refreshMs,
  onChanged,
  onClose,
}: {
  webhookId: number;
  deliveryId: number;
  refreshMs: number;
  onChanged: () => void;
  onClose: () => void;
}) {
  const [redelivered, setRedelivered] = useState<string>();
  const [redeliverError, setRedeliverError] = useState<string>();
  const path = `/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}`;
  // Follows the worker while open, as the table it opened from does.
  const loaded = useApi<Delivery>(path, { refreshMs });
  const delivery = loaded.data;
  const error = redeliverError ?? loaded.error?.message;

  const redeliver = async () => {
    setRedelivered(undefined);
    setRedeliverError(undefined);
    try {
      await post<Delivery>(`${path}/redeliver`);
      setRedelivered('Queued again: it goes out at the next delivery run.');
      loaded.reload();
      onChanged();
    } catch (err) {
      setRedeliverError(messageOf(err));
    }
  };

  const payload = delivery ? JSON.stringify(delivery.payload, null, 2) : '';
  const lastAttempt = delivery?.attemptLog?.at(-1);
  return (
    <section class="detail" aria-labelledby="delivery-title">
      <div class="section-head">
        <h3 id="delivery-title">Delivery {deliveryId}</h3>
        {delivery ? <StatusBadge status={delivery.status} /> : null}
        <button type="button" class="secondary" onClick={() => void redeliver()} disabled={!delivery || delivery.status === 'pending'}>
          Redeliver
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close delivery
        </button>
      </div>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {redelivered ? <Notice kind="success">{redelivered}</Notice> : null}
      {!delivery ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Event</dt>
            <dd>
              <code>{delivery.payload.eventType}</code>
            </dd>
            <dt>Attempts</dt>
            <dd>{delivery.attempts}</dd>
            <dt>Sent</dt>
            <dd>{formatTime(delivery.sentDate)}</dd>
            <dt>Next attempt</dt>
            <dd>{formatTime(delivery.nextAttemptAt)}</dd>
            {delivery.error ? (
              <>
                <dt>Last error</dt>
                <dd>{delivery.error}</dd>
              </>
            ) : null}
          </dl>

          <h4 id="attempt-log">Attempt log</h4>
          {delivery.attemptLog?.length ? (
            <table class="data" aria-labelledby="attempt-log">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Status</th>
                  <th scope="col">Error</th>
                  <th scope="col">Receiver's answer</th>
                </tr>
              </thead>
              <tbody>
                {delivery.attemptLog.map((a, i) => (
                  <tr key={i}>
                    <td>{formatTime(a.attemptedAt)}</td>
                    <td class="num">{a.durationMs} ms</td>
                    <td>{a.responseStatus ?? '—'}</td>
                    <td>{a.error ?? '—'}</td>
                    <td>{a.responseBody ? <pre class="answer">{a.responseBody}</pre> : <span class="muted">empty</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No attempt yet.</p>
          )}

          <div class="section-head">
            <h4 id="payload">Payload</h4>
            <CopyButton text={JSON.stringify(delivery.payload)} label="Copy payload" />
          </div>
          <pre class="payload" aria-labelledby="payload" tabIndex={0}>
            {payload}
          </pre>

          <h4 id="headers">Headers</h4>
          <p class="muted">
            The service does not keep the headers it sent: these are the names and how each value is made, with the signatures masked.
          </p>
          <table class="data" aria-labelledby="headers">
            <thead>
              <tr>
                <th scope="col">Header</th>
                <th scope="col">Value</th>
                <th scope="col">How it is made</th>
              </tr>
            </thead>
            <tbody>
              <Header name="Content-Type" value="application/json" how="always" />
              <Header name="User-Agent" value="alert-webhooks/<version>" how="the service's name and version" />
              <Header name="X-Payload-HMAC" value="••••••••" how="lowercase hex of HMAC-SHA256 of the exact body bytes, keyed by the webhook's secret" />
              <Header name="webhook-id" value={String(delivery.id)} how="the delivery id: the same on every attempt, for dropping repeats" />
              <Header
                name="webhook-timestamp"
                value={lastAttempt ? `≈ ${Math.floor(new Date(lastAttempt.attemptedAt).getTime() / 1000)}` : '—'}
                how="Unix seconds of each attempt (shown: the last attempt's)"
              />
              <Header name="webhook-signature" value="v1,••••••••" how={'base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>", same key (Standard Webhooks)'} />
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function Header({ name, value, how }: { name: string; value: string; how: string }) {
  return (
    <tr>
      <th scope="row">
        <code>{name}</code>
      </th>
      <td>
        <code>{value}</code>
      </td>
      <td>{how}</td>
    </tr>
  );
}
