import type { ComponentChildren } from 'preact';
import type { Webhook } from '../types';

/** An outcome: errors interrupt (role=alert), anything else is announced politely (role=status). */
export function Notice({ kind, children }: { kind: 'error' | 'success' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** What an action came to, for the one place its row of buttons shows it (OutcomeSlot). */
export interface Outcome {
  kind: 'error' | 'success' | 'info';
  text: string;
}

/**
 * Where the outcome of a row's actions shows: below the row, in room kept for one line whether or not a message is
 * there, so a message never moves a button (neither those of the row nor those under it).
 */
export function OutcomeSlot({ outcome }: { outcome: Outcome | undefined }) {
  return <div class="outcome-slot">{outcome ? <Notice kind={outcome.kind}>{outcome.text}</Notice> : null}</div>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** A pending delivery due now waits for the next delivery run: it reads "queued", not "0 attempts, next 2 s ago". */
export function isQueued(delivery: { status: string; nextAttemptAt: string | null }, now = Date.now()): boolean {
  return delivery.status === 'pending' && (delivery.nextAttemptAt === null || new Date(delivery.nextAttemptAt).getTime() <= now);
}

/** The delivery's status, "queued" for a pending one due now; "test" beside an admin's ping or example. */
export function DeliveryBadges({ delivery }: { delivery: { status: string; nextAttemptAt: string | null; test?: true | undefined } }) {
  return (
    <>
      {isQueued(delivery) ? <span class="badge badge-pending">queued</span> : <StatusBadge status={delivery.status} />}
      {delivery.test ? <span class="badge badge-test" title="An admin's test of the receiver: one attempt, never retried">test</span> : null}
    </>
  );
}

/** Enabled, or Disabled with its reason ("by admin", "automatically after 5 days of failed deliveries"). */
export function EnabledBadge({ webhook }: { webhook: Pick<Webhook, 'enabled' | 'disabledReason'> }) {
  if (webhook.enabled) return <span class="badge badge-sent">Enabled</span>;
  return (
    <>
      <span class="badge badge-failed">Disabled</span>
      {webhook.disabledReason ? <div class="muted">{webhook.disabledReason}</div> : null}
    </>
  );
}
