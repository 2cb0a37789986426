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

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
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
