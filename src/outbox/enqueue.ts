import { readWebhookSettings } from '../settings/settings-store.js';
import { integerArray, nullableIntegerArray, textArray } from '../db/array-literals.js';
import type { Database, Queryable, Transaction } from '../db/database.js';
import { deliveriesDue } from './due-signal.js';
import type { ClaimedDelivery } from './claims.js';
import type { EventType } from './schemas.js';

/** Told of each event written to the outbox, with its type (the metrics count them: webhook_events_recorded_total). */
export type EventsRecordedListener = (eventType: string) => void;

// Listeners here rather than a parameter: events are written from deep in the domain's transactions (matches, case
// actions, auto-disable), which know nothing of metrics. Each service adds its own and removes it on close; two
// services in one process (the tests) each hear the other's events too. An event is told when written, before
// its transaction commits: a rolled-back one is counted all the same (rare: a failed matches call).
const recordedListeners = new Set<EventsRecordedListener>();

/** Adds a listener of recorded events; answers the function that removes it. */
export function onEventsRecorded(listener: EventsRecordedListener): () => void {
  recordedListeners.add(listener);
  return () => recordedListeners.delete(listener);
}

/** An event as the domain produced it, its payload already rendered. */
export interface DomainEvent {
  eventType: EventType;
  /** Null for an event of no data source (webhookDisabled): only subscriptions without a sourceKey get it. */
  sourceKey: string | null;
  payload: string;
  /** What the event is about, for the search across webhooks (newCase, newMatch, caseStatusChange). */
  alertId?: number;
  caseId?: number;
  /** Webhooks that never get this event whatever they subscribe to (a disabled webhook is not told of itself). */
  excludedWebhookIds?: readonly number[];
}

interface Subscription {
  webhook_id: number;
  event_type: EventType;
  source_key: string | null;
}

/**
 * How many webhooks would get an event of one of these types on this data source: the most deliveries each such
 * event can create. One indexed count, cheap enough to ask before every matches call.
 */
export async function countSubscribedWebhooks(db: Queryable, eventTypes: readonly EventType[], sourceKey: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(DISTINCT webhook_id) AS count FROM webhook_subscriptions
     WHERE event_type = ANY($1::text[]) AND (source_key IS NULL OR source_key = $2)`,
    [eventTypes, sourceKey],
  );
  return Number(rows[0]?.count ?? 0);
}

/** Whether events create deliveries now (`webhooks.enabled`). */
export async function webhooksEnabled(db: Queryable): Promise<boolean> {
  return (await readWebhookSettings(db)).enabled;
}

/** Whether events create deliveries, and the subscriptions to some event types: what enqueueEvents reads first. */
export interface EventRouting {
  enabled: boolean;
  /** Deliveries are due at once (`deliveryFrequency: immediate`): the workers are told after the commit. */
  immediate: boolean;
  subscriptions: readonly Subscription[];
}

/**
 * What enqueueEvents reads before writing events of `eventTypes`, read in the transaction (the commit is judged by
 * the `enabled` it saw). A caller that enqueues many batches in one transaction (an alert run: 60 batches of 1,000)
 * reads it once and passes it to each, instead of two statements per batch.
 */
export async function readEventRouting(tx: Queryable, eventTypes: readonly EventType[]): Promise<EventRouting> {
  const settings = await readWebhookSettings(tx);
  if (!settings.enabled) return { enabled: false, immediate: false, subscriptions: [] };
  const { rows: subscriptions } = await tx.query<Subscription>(
    'SELECT webhook_id, event_type, source_key FROM webhook_subscriptions WHERE event_type = ANY($1::text[]) ORDER BY webhook_id',
    [eventTypes],
  );
  return { enabled: true, immediate: settings.deliveryFrequency === 'immediate', subscriptions };
}

/**
 * The transactional outbox: called inside the transaction of the domain change, it writes each event's
 * payload once and one pending delivery per subscribed webhook, so the deliveries exist exactly when the
 * change committed. A webhook gets an event when one of its entries has that type and no source or the
 * event's source; one delivery per webhook however many entries match. Nothing while the feature is disabled.
 * Two statements whatever the number of events: this is the hot path of a matches call.
 */
export async function enqueueEvents(tx: Transaction, events: readonly DomainEvent[], routing?: EventRouting): Promise<{ deliveries: number }> {
  if (events.length === 0) return { deliveries: 0 };
  const { enabled, immediate, subscriptions } = routing ?? (await readEventRouting(tx, [...new Set(events.map((e) => e.eventType))]));
  if (!enabled || subscriptions.length === 0) return { deliveries: 0 };

  const subscribers = new Map<string, number[]>(); // `${eventType}\0${sourceKey}` → webhook ids, for repeated pairs
  const subscribersOf = (event: DomainEvent): number[] => {
    const key = `${event.eventType}\0${event.sourceKey ?? ''}`;
    let ids = subscribers.get(key);
    if (!ids) {
      const set = new Set<number>();
      for (const s of subscriptions) {
        if (s.event_type === event.eventType && (s.source_key === null || s.source_key === event.sourceKey)) set.add(s.webhook_id);
      }
      ids = [...set];
      subscribers.set(key, ids);
    }
    const excluded = event.excludedWebhookIds;
    return excluded === undefined || excluded.length === 0 ? ids : ids.filter((id) => !excluded.includes(id));
  };

  const kept = events.map((event) => ({ event, webhookIds: subscribersOf(event) })).filter((e) => e.webhookIds.length > 0);
  if (kept.length === 0) return { deliveries: 0 };

  // Ids first, so each delivery can name its event in the same round trip as the events' insert.
  const { rows: ids } = await tx.query<{ id: number }>(
    // The sequence named once: pg_get_serial_sequence inside the select list ran once per id (5% of the server's
    // time recording an alert run's 60,000 events).
    `SELECT nextval(s.seq) AS id FROM (SELECT pg_get_serial_sequence('webhook_events', 'id')::regclass AS seq OFFSET 0) AS s, generate_series(1, $1::int)`,
    [kept.length],
  );
  const eventIds = ids.map((r) => r.id);
  const deliveryWebhookIds: number[] = [];
  const deliveryEventIds: number[] = [];
  kept.forEach(({ webhookIds }, i) => {
    for (const webhookId of webhookIds) {
      deliveryWebhookIds.push(webhookId);
      deliveryEventIds.push(eventIds[i]!);
    }
  });
  const payloads = payloadsParameter(kept.map((k) => k.event.payload));
  await tx.query(
    `WITH inserted_events AS (
       INSERT INTO webhook_events (id, event_type, payload, alert_id, case_id)
       SELECT * FROM unnest($1::bigint[], $2::text[], ${payloads.separated ? `string_to_array($3::text, E'\\x01')` : '$3::text[]'}, $6::int[], $7::int[])
     )
     INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at)
     SELECT webhook_id, event_id, now() FROM unnest($4::int[], $5::bigint[]) AS d(webhook_id, event_id)`,
    // Literals built here: pg escapes every element of an array with two regular expressions (payloads are long).
    [
      integerArray(eventIds),
      textArray(kept.map((k) => k.event.eventType)),
      payloads.text,
      integerArray(deliveryWebhookIds),
      integerArray(deliveryEventIds),
      nullableIntegerArray(kept.map((k) => k.event.alertId ?? null)),
      nullableIntegerArray(kept.map((k) => k.event.caseId ?? null)),
    ],
  );
  for (const listener of recordedListeners) for (const { event } of kept) listener(event.eventType);
  // `immediate`: the workers are told once this commits (delivery/wake-up.ts), not by a NOTIFY in this transaction.
  // A NOTIFY takes a lock that every notifying transaction holds through its commit's fsync, so recording
  // transactions would commit one at a time. Measured (PostgreSQL 15, 8 writers of a 2-row insert, 3 rounds):
  // 460-830 commits/s plain, 250-310 with the NOTIFY inside, 610-930 with one coalesced NOTIFY after the commits.
  if (immediate) tx.afterCommit(deliveriesDue);
  return { deliveries: deliveryWebhookIds.length };
}

// Never in a payload: each is JSON text, which writes every control character as an escape (\u0001).
const SEPARATOR = '\u0001';

/**
 * The payloads as one parameter: joined by SEPARATOR (split by string_to_array), or, for a payload that is not such
 * JSON (empty, or holding the separator), an array literal. Joined, nothing is escaped: as a literal, each payload's
 * quotes were escaped here (a second JSON.stringify of each) and unescaped by the server, character by character.
 */
function payloadsParameter(payloads: readonly string[]): { text: string; separated: boolean } {
  const separated = payloads.every((payload) => payload.length > 0 && !payload.includes(SEPARATOR));
  return { text: separated ? payloads.join(SEPARATOR) : textArray(payloads), separated };
}

/**
 * An admin's test of a receiver, a ping or an example of an event (`eventType`, default `ping`): its event and its
 * delivery, created already claimed by the caller, who attempts it at once, whether the webhook is enabled or not (it
 * is how an admin checks a receiver before enabling its webhook). Marked `is_ping`: never retried, and no part of
 * the webhook's failure streak.
 */
export async function enqueuePing(db: Database, webhookId: number, payload: string, leaseMs: number, eventType: EventType | 'ping' = 'ping'): Promise<ClaimedDelivery> {
  return db.transaction(async (tx) => {
    const { rows: events } = await tx.query<{ id: number }>(`INSERT INTO webhook_events (event_type, payload) VALUES ($1, $2) RETURNING id`, [eventType, payload]);
    const { rows } = await tx.query<ClaimedDelivery>(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, is_ping, attempts, lease_token, locked_until, next_attempt_at)
       VALUES ($1, $2, true, 1, 1, now() + $3 * interval '1 millisecond', now())
       RETURNING id, webhook_id AS "webhookId", attempts, lease_token AS "leaseToken", is_ping AS "isPing",
         (SELECT version FROM webhooks WHERE id = $1) AS "webhookVersion"`,
      [webhookId, events[0]!.id, leaseMs],
    );
    // An example counts as what it is, a test, not as an event of its type.
    for (const listener of recordedListeners) listener(eventType === 'ping' ? 'ping' : 'example');
    return { ...rows[0]!, payload };
  });
}
