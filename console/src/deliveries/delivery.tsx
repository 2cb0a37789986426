import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { CopyButton } from '../components/copy-button';
import { DeliveryBadges, isQueued, OutcomeSlot } from '../components/notice';
import { curlCommand } from '../curl';
import { formatTime } from '../format';
import type { Attempt, Delivery } from '../types';
import { useApi } from '../use-api';

/** One delivery opened: its attempts as sent and answered (each copyable as curl), its payload, and redelivery. */
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
  // The exact bytes sent: the payload is kept as compact JSON, which JSON.stringify writes again byte for byte.
  const body = delivery ? JSON.stringify(delivery.payload) : '';
  const log = delivery?.attemptLog ?? [];
  return (
    <section class="detail" aria-labelledby="delivery-title">
      <div class="section-head">
        <h3 id="delivery-title">Delivery {deliveryId}</h3>
        {delivery ? <DeliveryBadges delivery={delivery} /> : null}
        {/* At the row's end: a status that changes ("failed", then "queued") never moves them. */}
        <button type="button" class="secondary at-end" onClick={() => void redeliver()} disabled={!delivery || delivery.status === 'pending'}>
          Redeliver
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close delivery
        </button>
      </div>
      <OutcomeSlot outcome={error ? { kind: 'error', text: error } : redelivered ? { kind: 'success', text: redelivered } : undefined} />
      {!delivery ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Event</dt>
            <dd>
              <code>{delivery.payload.eventType}</code>
              {delivery.test ? <span class="muted"> (a test: sent once, never retried)</span> : null}
            </dd>
            <dt>Attempts</dt>
            <dd>{delivery.attempts === 0 && log.length > 0 ? `none since it was redelivered (${log.length} before)` : delivery.attempts}</dd>
            <dt>Sent</dt>
            <dd>{formatTime(delivery.sentDate)}</dd>
            <dt>Next attempt</dt>
            <dd>{isQueued(delivery) ? 'queued: it goes out at the next delivery run' : formatTime(delivery.nextAttemptAt)}</dd>
            {delivery.error ? (
              <>
                <dt>Last error</dt>
                <dd>{delivery.error}</dd>
              </>
            ) : null}
          </dl>

          <h4 id="attempt-log">Attempt log</h4>
          {log.length ? (
            <>
              <p class="hint">
                Each attempt as sent and as answered. The signature headers are not secrets: each proves one body at one time, and the secret itself is never sent, so
                "Copy as curl" holds none. A receiver that checks <code>webhook-timestamp</code> refuses a copy once it is older than its tolerance.
              </p>
              <ol class="attempts" aria-labelledby="attempt-log">
                {log.map((attempt, i) => (
                  <AttemptItem key={i} attempt={attempt} number={i + 1} open={i === log.length - 1} body={body} />
                ))}
              </ol>
            </>
          ) : (
            <p class="muted">No attempt yet.</p>
          )}

          <div class="section-head">
            <h4 id="payload">Payload</h4>
            <CopyButton text={body} label="Copy payload" />
          </div>
          <pre class="payload" aria-labelledby="payload" tabIndex={0}>
            {payload}
          </pre>
        </>
      )}
    </section>
  );
}

/** One attempt: when, what came back and how fast; opened, the request sent (copyable as curl) and the whole answer. */
function AttemptItem({ attempt, number, open, body }: { attempt: Attempt; number: number; open: boolean; body: string }) {
  const answered = attempt.responseStatus !== undefined;
  const ok = answered && attempt.responseStatus! >= 200 && attempt.responseStatus! < 300;
  return (
    <li class="attempt" aria-label={`Attempt ${number}`}>
      <div class="attempt-head">
        <strong>Attempt {number}</strong>
        <span>{formatTime(attempt.attemptedAt)}</span>
        <span class={`badge ${ok ? 'badge-sent' : 'badge-failed'}`}>{answered ? attempt.responseStatus : 'no answer'}</span>
        <span class="muted">
          {attempt.durationMs} ms{attempt.timeToFirstByteMs !== undefined ? `, first byte after ${attempt.timeToFirstByteMs} ms` : ''}
        </span>
      </div>
      {attempt.error ? <p class="attempt-error">{attempt.error}</p> : null}
      <details open={open}>
        <summary>Request and answer</summary>
        <div class="exchange">
          <div>
            <h5>Request</h5>
            <p class="url">POST {attempt.url ?? '(URL not recorded)'}</p>
            {attempt.requestHeaders ? (
              <>
                <Headers headers={attempt.requestHeaders} label={`Request headers of attempt ${number}`} />
                {attempt.url ? <CopyButton text={curlCommand(attempt.url, attempt.requestHeaders, body)} label="Copy as curl" /> : null}
              </>
            ) : (
              <p class="muted">Headers not recorded: this attempt was made before the service kept them.</p>
            )}
          </div>
          <div>
            <h5>Answer</h5>
            {!answered ? (
              <p class="muted">No answer came{attempt.error ? `: ${attempt.error}` : ''}.</p>
            ) : (
              <>
                <p>
                  Status <strong>{attempt.responseStatus}</strong>
                </p>
                {attempt.responseHeaders ? <Headers headers={attempt.responseHeaders} label={`Answer headers of attempt ${number}`} /> : null}
                {attempt.responseHeadersTruncated ? <p class="hint">More headers came than are kept (40, 4,096 characters in all).</p> : null}
                {attempt.responseBody ? (
                  <pre class="answer" aria-label={`Answer body of attempt ${number}`} tabIndex={0}>
                    {attempt.responseBody}
                  </pre>
                ) : (
                  <p class="muted">Empty body.</p>
                )}
                {attempt.responseBodyTruncated ? <p class="hint">The body went on: only its first 4 KiB are kept.</p> : null}
              </>
            )}
          </div>
        </div>
      </details>
    </li>
  );
}

function Headers({ headers, label }: { headers: Readonly<Record<string, string>>; label: string }) {
  return (
    <table class="headers" aria-label={label}>
      <tbody>
        {Object.entries(headers).map(([name, value]) => (
          <tr key={name}>
            <th scope="row">
              <code>{name}</code>
            </th>
            <td>
              <code>{value}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
