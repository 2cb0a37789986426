/**
 * The search across webhooks: deliveries filtered by any of webhook, event type, status, time range, case, alert,
 * delivery id (`webhook-id`) and the receiver's last answer status, newest first, paged by a cursor.
 */
import type { Queryable } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import { DELIVERY_COLUMNS, toDelivery, type DeliveryRow } from './read-model.js';
import type { DeliverySearchPage, DeliveryStatus } from './schemas.js';

export interface DeliverySearch {
  webhookId?: number | undefined;
  eventType?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Created at or after. */
  since?: Date | undefined;
  /** Created before. */
  until?: Date | undefined;
  caseId?: number | undefined;
  alertId?: number | undefined;
  deliveryId?: number | undefined;
  responseStatus?: number | undefined;
  /** The previous page's `nextCursor`. */
  cursor?: string | undefined;
  limit: number;
}

// The two shapes of SEARCH_CURSOR_PATTERN (schemas.ts): an id; an event's time and an id.
const ID_CURSOR = /^[0-9]{1,16}$/;
const TIME_CURSOR = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)\/([0-9]{1,16})$/;

const TIME_OF_EVENT = `to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The statement for `search`: only the filters given, each a plain condition on an indexed column, so the planner sees
 * which hold and picks what to walk (a `$n IS NULL OR …` condition would hide that from it). Two orders, newest first:
 *
 * - Without a time range, by delivery id, the cursor the last id seen: the primary key backwards (no filter, an
 *   alert, a status, an event type or an answer, each kept as it comes), (webhook_id, id) for a webhook, the partial
 *   indexes of a webhook's failed deliveries and of pings, the events' case index (then the case's deliveries, sorted).
 * - With a time range, by the event's time, then delivery id: the events' time index read in that order, each event's
 *   deliveries probed, so a page costs about a page of probes wherever the range lies. By id instead, a range in the
 *   past was read only after every delivery newer than it (ids follow time, but the planner cannot know it): 0.8 s
 *   for an hour three days back among 1,000,000.
 *
 * Either way a page is a range of the order's keys, so deliveries recorded meanwhile (newer) never move the pages
 * after the first. A delivery's created_at is its event's (one statement writes both), so times are read on the event.
 * What each costs with 1,000,000 deliveries: bench/README.md, "Health over time and search".
 */
export function searchStatement(search: DeliverySearch): { text: string; values: unknown[]; byTime: boolean } {
  const byTime = search.since !== undefined || search.until !== undefined;
  const values: unknown[] = [];
  const conditions: string[] = [];
  const parameter = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = (condition: (p: string) => string, value: unknown) => conditions.push(condition(parameter(value)));
  if (search.webhookId !== undefined) where((p) => `d.webhook_id = ${p}`, search.webhookId);
  if (search.deliveryId !== undefined) where((p) => `d.id = ${p}`, search.deliveryId);
  if (search.status !== undefined) where((p) => `d.status = ${p}`, search.status);
  if (search.responseStatus !== undefined) where((p) => `d.response_status = ${p}`, search.responseStatus);
  if (search.eventType !== undefined) where((p) => `e.event_type = ${p}`, search.eventType);
  // Said of the delivery too, so its partial index of pings can answer (a ping's event is a ping, and nothing else's).
  if (search.eventType === 'ping') conditions.push('d.is_ping');
  if (search.caseId !== undefined) where((p) => `e.case_id = ${p}`, search.caseId);
  if (search.alertId !== undefined) where((p) => `e.alert_id = ${p}`, search.alertId);
  if (search.since !== undefined) where((p) => `e.created_at >= ${p}`, search.since);
  if (search.until !== undefined) where((p) => `e.created_at < ${p}`, search.until);
  if (search.cursor !== undefined) {
    const after = parseCursor(search.cursor, byTime);
    if (after.time === undefined) where((p) => `d.id < ${p}`, after.id);
    else {
      const time = parameter(after.time);
      const id = parameter(after.id);
      // The first condition alone bounds the index walk; the second picks up after the last delivery of that instant.
      conditions.push(`e.created_at <= ${time}::timestamptz`, `(e.created_at < ${time}::timestamptz OR d.id < ${id})`);
    }
  }
  // One more than the page: whether there is a next page, without counting.
  const limit = parameter(search.limit + 1);
  const text = `SELECT ${DELIVERY_COLUMNS}${byTime ? `, ${TIME_OF_EVENT} AS event_time` : ''}
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
    ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
    ORDER BY ${byTime ? 'e.created_at DESC, d.id DESC' : 'd.id DESC'} LIMIT ${limit}`;
  return { text, values, byTime };
}

function parseCursor(cursor: string, byTime: boolean): { id: number; time?: string } {
  const timed = TIME_CURSOR.exec(cursor);
  if (byTime && timed) return { time: timed[1]!, id: Number(timed[2]) };
  if (!byTime && ID_CURSOR.test(cursor)) return { id: Number(cursor) };
  throw invalidParameter(
    `query parameter cursor ${JSON.stringify(cursor)} is not a cursor of this search: pass the nextCursor of the previous page of the same search`,
    'cursor',
  );
}

/** One page, newest first; `nextCursor` null on the last. No total: counting every match is what paging avoids. */
export async function searchDeliveries(db: Queryable, search: DeliverySearch): Promise<DeliverySearchPage> {
  const { text, values, byTime } = searchStatement(search);
  const { rows } = await db.query<DeliveryRow & { event_time?: string }>(text, values);
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > search.limit && last ? (byTime ? `${last.event_time}/${last.id}` : String(last.id)) : null;
  return { items: page.map(toDelivery), nextCursor };
}
