import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { SelectField } from '../components/field';
import { Notice, StatusBadge } from '../components/notice';
import { Pager } from '../components/pager';
import { formatAgo, formatTime } from '../format';
import type { Delivery, Page } from '../types';
import { useApi } from '../use-api';
import { DeliveryDetail } from './delivery';

const PAGE_SIZE = 20;
/** While the page is open the table follows the worker: a few seconds keeps it current without loading the API. */
export const REFRESH_MS = 3000;

const STATUS_OPTIONS = [
  { value: '', label: 'All' },
  { value: 'pending', label: 'Pending' },
  { value: 'sent', label: 'Sent' },
  { value: 'failed', label: 'Failed' },
];

/** The webhook's deliveries, newest first, filtered by status, paged, refreshed while open. */
export function Deliveries({ webhookId }: { webhookId: number }) {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const [openId, setOpenId] = useState<number>();
  const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE_SIZE), ...(status ? { status } : {}) });
  const { data: page, error, reload } = useApi<Page<Delivery>>(`/api/admin/webhooks/${webhookId}/deliveries?${query}`, { refreshMs: REFRESH_MS });

  return (
    <section aria-labelledby="deliveries" class="card">
      <div class="section-head">
        <h2 id="deliveries">Deliveries</h2>
        <SelectField
          label="Status"
          options={STATUS_OPTIONS}
          value={status}
          onChange={(e) => {
            setStatus(e.currentTarget.value);
            setOffset(0);
          }}
        />
        <RedeliverFailed webhookId={webhookId} onDone={reload} />
        <span class="muted refresh">Refreshes every {REFRESH_MS / 1000} s</span>
      </div>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {page === undefined ? (
        <p class="loading">Loading…</p>
      ) : page.items.length === 0 ? (
        <p>No {status || ''} deliveries{status ? '' : ' yet'}.</p>
      ) : (
        <table class="data">
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Sent / next attempt</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((d) => (
              <tr key={d.id} class={d.id === openId ? 'selected' : ''}>
                <td>
                  <button type="button" class="link" aria-label={`Open delivery ${d.id}`} aria-expanded={d.id === openId} onClick={() => setOpenId(d.id === openId ? undefined : d.id)}>
                    #{d.id}
                  </button>
                </td>
                <td>
                  <code>{d.payload.eventType}</code>
                </td>
                <td>
                  <StatusBadge status={d.status} />
                </td>
                <td class="num">{d.attempts}</td>
                <td>{d.responseStatus ?? d.error ?? '—'}</td>
                <td title={formatTime(d.createdAt)}>{formatAgo(d.createdAt)}</td>
                <td>{d.sentDate ? formatTime(d.sentDate) : d.nextAttemptAt ? `next ${formatAgo(d.nextAttemptAt)}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page ? <Pager label="Deliveries pages" offset={offset} pageSize={PAGE_SIZE} total={page.totalCount} onOffset={setOffset} /> : null}
      {openId !== undefined ? <DeliveryDetail key={openId} webhookId={webhookId} deliveryId={openId} refreshMs={REFRESH_MS} onChanged={reload} onClose={() => setOpenId(undefined)} /> : null}
    </section>
  );
}

/** Every failed delivery of the webhook made pending and due now, in one call (after a receiver's outage). */
function RedeliverFailed({ webhookId, onDone }: { webhookId: number; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const redeliver = async () => {
    setBusy(true);
    setOutcome(undefined);
    try {
      const { count } = await post<{ count: number }>(`/api/admin/webhooks/${webhookId}/deliveries/redeliver`, { status: 'failed' });
      setOutcome({ ok: true, text: count === 0 ? 'No failed delivery to redeliver.' : `${count === 1 ? '1 failed delivery' : `${count} failed deliveries`} queued again.` });
      onDone();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="inline-action">
      <button type="button" class="secondary" disabled={busy} onClick={() => void redeliver()}>
        Redeliver all failed
      </button>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
    </div>
  );
}
