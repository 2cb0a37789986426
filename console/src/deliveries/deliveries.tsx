import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { SelectField } from '../components/field';
import { DeliveryBadges, isQueued, Notice, OutcomeSlot, type Outcome } from '../components/notice';
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
  const [outcome, setOutcome] = useState<Outcome>();
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
        <RedeliverFailed webhookId={webhookId} onDone={reload} onOutcome={setOutcome} />
        <span class="muted refresh">Refreshes every {REFRESH_MS / 1000} s</span>
      </div>
      <OutcomeSlot outcome={outcome} />
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {page === undefined ? (
        <p class="loading">Loading…</p>
      ) : page.items.length === 0 ? (
        <p>No {status || ''} deliveries{status ? '' : ' yet'}.</p>
      ) : (
        // Below 640 px wide each row is a card (styles.css, "Small screens"), its cells labelled by data-label; the
        // explicit roles keep it a table for screen readers, which some browsers forget once rows are not table rows.
        <table class="data cards" role="table" aria-labelledby="deliveries">
          <thead role="rowgroup">
            <tr role="row">
              <th role="columnheader" scope="col">Delivery</th>
              <th role="columnheader" scope="col">Event</th>
              <th role="columnheader" scope="col">Status</th>
              <th role="columnheader" scope="col">Attempts</th>
              <th role="columnheader" scope="col">Last answer</th>
              <th role="columnheader" scope="col">Created</th>
              <th role="columnheader" scope="col">Sent / next attempt</th>
            </tr>
          </thead>
          <tbody role="rowgroup">
            {page.items.map((d) => (
              <tr role="row" key={d.id} class={d.id === openId ? 'selected' : ''}>
                <td role="cell" data-label="Delivery">
                  <button type="button" class="link" aria-label={`Open delivery ${d.id}`} aria-expanded={d.id === openId} onClick={() => setOpenId(d.id === openId ? undefined : d.id)}>
                    #{d.id}
                  </button>
                </td>
                <td role="cell" data-label="Event">
                  <code>{d.payload.eventType}</code>
                </td>
                <td role="cell" data-label="Status">
                  <DeliveryBadges delivery={d} />
                </td>
                <td role="cell" data-label="Attempts" class="num">
                  {d.attempts === 0 ? '—' : d.attempts}
                </td>
                <td role="cell" data-label="Last answer">{d.responseStatus ?? d.error ?? '—'}</td>
                <td role="cell" data-label="Created" title={formatTime(d.createdAt)}>
                  {formatAgo(d.createdAt)}
                </td>
                <td role="cell" data-label="Sent / next">{whenText(d)}</td>
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

/** When it was sent, or when it goes: "queued" when due now (after a redeliver: it waits for the next delivery run). */
function whenText(d: Delivery): string {
  if (d.sentDate) return formatTime(d.sentDate);
  if (isQueued(d)) return 'queued for the next delivery run';
  return d.nextAttemptAt ? `next attempt ${formatAgo(d.nextAttemptAt)}` : '—';
}

/** Every failed delivery of the webhook made pending and due now, in one call (after a receiver's outage). */
function RedeliverFailed({ webhookId, onDone, onOutcome }: { webhookId: number; onDone: () => void; onOutcome: (outcome: Outcome | undefined) => void }) {
  const [busy, setBusy] = useState(false);
  const redeliver = async () => {
    setBusy(true);
    onOutcome(undefined);
    try {
      const { count } = await post<{ count: number }>(`/api/admin/webhooks/${webhookId}/deliveries/redeliver`, { status: 'failed' });
      onOutcome({ kind: 'success', text: count === 0 ? 'No failed delivery to redeliver.' : `${count === 1 ? '1 failed delivery' : `${count} failed deliveries`} queued again.` });
      onDone();
    } catch (err) {
      onOutcome({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" class="secondary" disabled={busy} onClick={() => void redeliver()}>
      Redeliver all failed
    </button>
  );
}
