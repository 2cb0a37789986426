import type { Queryable } from '../db/database.js';

/** What the scrape shows of one webhook's deliveries (see readBacklog). */
export interface WebhookBacklog {
  webhookId: number;
  /** Pending and due now (in flight included), counted up to DUE_COUNT_CAP. */
  due: number;
  /** Seconds since the oldest due delivery became due; 0 when none is due. */
  oldestDueAgeSeconds: number;
  /** Ended failed and not yet removed by the cleanup: failed within failedDeliveryRetentionDelayMs. */
  failed: number;
  disabled: boolean;
}

/** Webhooks read per scrape, in id order: bounds the query however many there are. */
export const BACKLOG_MAX_WEBHOOKS = 1_000;
/** Due deliveries counted per webhook: a gauge at this value means "at least". Bounds the walk of the due index. */
export const DUE_COUNT_CAP = 100_000;

/**
 * One statement for the scrape: for each webhook (up to BACKLOG_MAX_WEBHOOKS), its due count and its oldest due
 * time, both from the due index (webhook_id, next_attempt_at WHERE pending), so the cost follows what is due and
 * never the table; and its failed count, one grouped count over the failed rows the cleanup has left (the
 * failed index, webhook_deliveries_failed), which retention bounds.
 */
export async function readBacklog(db: Queryable, maxWebhooks = BACKLOG_MAX_WEBHOOKS, dueCap = DUE_COUNT_CAP): Promise<WebhookBacklog[]> {
  const { rows } = await db.query<{ webhookId: number; due: number; oldestDueAgeSeconds: number | null; failed: number; disabled: boolean }>(
    `WITH w AS (SELECT id, enabled FROM webhooks ORDER BY id LIMIT $1),
     failed AS (
       SELECT webhook_id, count(*) AS failed FROM webhook_deliveries
       WHERE status = 'failed' AND webhook_id IN (SELECT id FROM w)
       GROUP BY webhook_id
     )
     SELECT w.id AS "webhookId", NOT w.enabled AS disabled, due.count AS due,
            EXTRACT(EPOCH FROM now() - oldest.at) AS "oldestDueAgeSeconds", coalesce(f.failed, 0) AS failed
     FROM w
     CROSS JOIN LATERAL (
       SELECT count(*) AS count FROM (
         SELECT 1 FROM webhook_deliveries
         WHERE webhook_id = w.id AND status = 'pending' AND next_attempt_at <= now()
         LIMIT $2
       ) capped
     ) due
     LEFT JOIN LATERAL (
       SELECT next_attempt_at AS at FROM webhook_deliveries
       WHERE webhook_id = w.id AND status = 'pending' AND next_attempt_at <= now()
       ORDER BY next_attempt_at LIMIT 1
     ) oldest ON true
     LEFT JOIN failed f ON f.webhook_id = w.id
     ORDER BY w.id`,
    [maxWebhooks, dueCap],
  );
  return rows.map((r) => ({
    webhookId: Number(r.webhookId),
    due: Number(r.due),
    oldestDueAgeSeconds: r.oldestDueAgeSeconds === null ? 0 : Math.max(0, Number(r.oldestDueAgeSeconds)),
    failed: Number(r.failed),
    disabled: r.disabled,
  }));
}
