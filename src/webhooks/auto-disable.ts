import type { Database } from '../db/database.js';
import { enqueueEvents } from '../outbox/enqueue.js';
import { renderWebhookDisabled } from '../outbox/events.js';

/** A webhook the service disabled because every delivery to it kept failing. */
export interface AutoDisabledWebhook {
  id: number;
  url: string;
  description: string;
  reason: string;
  disabledAt: string;
  /** When its attempts started failing, with none succeeding since. */
  failingSince: string;
}

/**
 * Disables those of `ids` (webhooks whose attempts have just failed, none sent) whose attempts have all failed for
 * at least `autoDisableAfterMs`: `failing_since` is set by the outcome writer at the first failed attempt and cleared
 * by any sent delivery, so "all failed for that long, none sent" is that column alone. Checked again here under the
 * row lock, since the outcome write that named them committed before. Each one disabled emits `webhookDisabled`, in
 * the same transaction, to every other webhook subscribed to it (the disabled one is never told of itself).
 * `autoDisableAfterMs` 0 disables nothing.
 */
export async function disableFailingWebhooks(db: Database, ids: readonly number[], autoDisableAfterMs: number): Promise<AutoDisabledWebhook[]> {
  if (ids.length === 0 || autoDisableAfterMs <= 0) return [];
  const reason = `automatically after ${describeDuration(autoDisableAfterMs)} of failed deliveries`;
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: number; url: string; description: string; disabled_at: Date; failing_since: Date }>(
      `UPDATE webhooks SET enabled = false, disabled_at = now(), disabled_reason = $3, version = version + 1, updated_at = now()
       WHERE id = ANY($1::int[]) AND enabled AND failing_since <= now() - $2::float8 * interval '1 millisecond'
       RETURNING id, url, description, disabled_at, failing_since`,
      [ids, autoDisableAfterMs, reason],
    );
    await enqueueEvents(
      tx,
      rows.map((row) => ({
        eventType: 'webhookDisabled' as const,
        sourceKey: null,
        payload: renderWebhookDisabled(row, reason, row.disabled_at),
        excludedWebhookIds: [row.id],
      })),
    );
    return rows.map((row) => ({
      id: row.id,
      url: row.url,
      description: row.description,
      reason,
      disabledAt: row.disabled_at.toISOString(),
      failingSince: row.failing_since.toISOString(),
    }));
  });
}

const UNITS: readonly [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
];

/** `432000000` → `5 days`, `5400000` → `1 hour 30 minutes`, `1500` → `1.5 seconds`: for a reason people read. */
export function describeDuration(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [size, unit] of UNITS) {
    const count = Math.floor(rest / size);
    if (count === 0) continue;
    parts.push(`${count} ${unit}${count === 1 ? '' : 's'}`);
    rest -= count * size;
  }
  const seconds = rest / 1000;
  if (seconds > 0 || parts.length === 0) parts.push(`${seconds} second${seconds === 1 ? '' : 's'}`);
  return parts.join(' ');
}
