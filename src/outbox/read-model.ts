/** The admin's view of the outbox: a webhook's deliveries, newest first, and one delivery with its attempt log. */
import type { Queryable } from '../db/database.js';
import { notFound } from '../errors.js';
import type { AttemptLogEntry, Delivery, DeliveryHealth, DeliveryStatus } from './schemas.js';

export type { AttemptLogEntry, Delivery } from './schemas.js';

export interface DeliveryRow {
  id: number;
  webhook_id: number;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  sent_date: Date | null;
  response_status: number | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  is_ping: boolean;
  attempt_log?: AttemptLogEntry[];
}

export const DELIVERY_COLUMNS = `d.id, d.webhook_id, e.payload, d.status, d.attempts, d.next_attempt_at, d.sent_date,
  d.response_status, d.error, d.created_at, d.updated_at, d.is_ping`;

export function toDelivery(row: DeliveryRow): Delivery {
  const delivery: Delivery = {
    id: row.id,
    webhookId: row.webhook_id,
    payload: JSON.parse(row.payload),
    sentDate: row.sent_date?.toISOString() ?? null,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (row.error !== null) delivery.error = row.error;
  if (row.response_status !== null) delivery.responseStatus = row.response_status;
  if (row.is_ping) delivery.test = true;
  if (row.attempt_log) delivery.attemptLog = row.attempt_log;
  return delivery;
}

/** Newest first, with the total for the same filter. */
export async function listDeliveries(
  db: Queryable,
  webhookId: number,
  page: { offset: number; limit: number; status?: DeliveryStatus | undefined },
): Promise<{ totalCount: number; items: Delivery[] }> {
  const status = page.status ?? null;
  const { rows: count } = await db.query<{ total: number }>(
    'SELECT count(*) AS total FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2)',
    [webhookId, status],
  );
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE d.webhook_id = $1 AND ($2::text IS NULL OR d.status = $2) ORDER BY d.id DESC OFFSET $3 LIMIT $4`,
    [webhookId, status, page.offset, page.limit],
  );
  return { totalCount: count[0]?.total ?? 0, items: rows.map(toDelivery) };
}

/** One delivery of a webhook with its attempt log; 404 when the pair does not exist. */
export async function findDelivery(db: Queryable, webhookId: number, deliveryId: number): Promise<Delivery> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS}, d.attempt_log FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE d.id = $1 AND d.webhook_id = $2`,
    [deliveryId, webhookId],
  );
  if (!rows[0]) throw notFound('delivery', deliveryId);
  return toDelivery(rows[0]);
}

export type DeliveryCounts = Record<DeliveryStatus, number>;

/** How many deliveries a webhook has in each status: what deleting it would take with it. */
export async function countDeliveriesByStatus(db: Queryable, webhookId: number): Promise<DeliveryCounts> {
  const { rows } = await db.query<{ status: DeliveryStatus; count: number }>(
    'SELECT status, count(*) AS count FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY status',
    [webhookId],
  );
  const counts: DeliveryCounts = { pending: 0, sent: 0, failed: 0 };
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

/**
 * The health of each of `webhookIds`, in one statement: what a list of webhooks shows (a page of a few hundred asked
 * six statements a webhook before). The pending count walks the due index and the failed one the deliveries the
 * webhook has failed; neither reads the sent ones, however many a webhook has (only `countDeliveriesByStatus` does).
 */
export async function deliveryHealth(db: Queryable, webhookIds: readonly number[]): Promise<Map<number, DeliveryHealth>> {
  const { rows } = await db.query<{
    webhook_id: number;
    pending: number;
    failed: number;
    last_id: number | null;
    last_status: DeliveryStatus | null;
    last_event_type: string | null;
    last_at: Date | null;
  }>(
    `SELECT w.id AS webhook_id,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'failed') AS failed,
            last.id AS last_id, last.status AS last_status, last.event_type AS last_event_type, last.at AS last_at
     FROM unnest($1::int[]) AS w(id)
     LEFT JOIN LATERAL (
       SELECT d.id, d.status, e.event_type, COALESCE(d.sent_date, d.updated_at) AS at
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.webhook_id = w.id ORDER BY d.id DESC LIMIT 1
     ) last ON true`,
    [webhookIds],
  );
  return new Map(
    rows.map((row) => [
      row.webhook_id,
      {
        pending: row.pending,
        failed: row.failed,
        lastDelivery:
          row.last_id === null ? null : { id: row.last_id, status: row.last_status!, eventType: row.last_event_type!, at: row.last_at!.toISOString() },
      },
    ]),
  );
}
