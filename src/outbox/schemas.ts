/**
 * The outbox's API shapes (a delivery and its attempts) and the names they use (event types, delivery statuses),
 * declared once, in a file of no Node import: the shapes of other domains take them, and the console reads their
 * types.
 */
import { Type, type Static } from 'typebox';
import { DEFAULT_PAGE_SIZE, EVENT_PAYLOAD_MARK, MAX_INT4, MAX_PAGE_SIZE, Timestamp } from '../http/schemas.js';
import { RECORDED_RESPONSE_HEADERS } from '../limits.js';

/** The events of Linkurious Enterprise: what a webhook created without `events` gets (LKE clients expect no more). */
export const LKE_EVENT_TYPES = ['newCase', 'newMatch', 'caseStatusChange'] as const;
/** Every event a webhook may subscribe to. `webhookDisabled` has no data source (no `sourceKey`). */
export const EVENT_TYPES = [...LKE_EVENT_TYPES, 'webhookDisabled'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** The event types that carry no `sourceKey`: a subscription to one of them with a sourceKey would never match. */
export const SOURCELESS_EVENT_TYPES: readonly EventType[] = ['webhookDisabled'];

export const DELIVERY_STATUSES = ['pending', 'sent', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const Headers = (description: string) => Type.Record(Type.String(), Type.String(), { description });

export const AttemptSchema = Type.Object({
  attemptedAt: Timestamp,
  url: Type.Optional(Type.String({ description: 'where this attempt went (absent from attempts made before it was recorded)' })),
  durationMs: Type.Integer({ description: 'from the start of the attempt to its outcome' }),
  timeToFirstByteMs: Type.Optional(Type.Integer({ description: "from the start of the attempt to the answer's status line and headers; absent without an answer" })),
  responseStatus: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  requestHeaders: Type.Optional(Headers('the headers sent, names in lower case, signatures included (never the secret); HTTP adds Host and Content-Length. Absent when no request was made, and from attempts made before it was recorded')),
  responseHeaders: Type.Optional(Headers(
    `the answer's headers, names in lower case, repeated ones joined with ", ": at most ${RECORDED_RESPONSE_HEADERS.count}, values cut at ` +
      `${RECORDED_RESPONSE_HEADERS.valueChars} characters, ${RECORDED_RESPONSE_HEADERS.totalChars} characters in all; set-cookie values are not recorded`,
  )),
  responseHeadersTruncated: Type.Optional(Type.Literal(true, { description: 'some answer headers were left out by the bounds' })),
  responseBody: Type.Optional(Type.String({ description: 'the first 4 KiB of the answer\'s body, as UTF-8' })),
  responseBodyTruncated: Type.Optional(Type.Literal(true, { description: 'the body was longer than responseBody' })),
}, { $id: 'DeliveryAttempt', description: 'One HTTP attempt of a delivery: the request sent and the answer that came' });

export const DeliverySchema = Type.Object({
  id: Type.Integer(),
  webhookId: Type.Integer(),
  // Any JSON to the serializer; in the OpenAPI document, one of the event payloads (src/openapi.ts).
  payload: Type.Unknown({ description: 'the exact JSON sent', [EVENT_PAYLOAD_MARK]: true }),
  sentDate: Type.Union([Timestamp, Type.Null()]),
  error: Type.Optional(Type.String()),
  status: Type.Enum([...DELIVERY_STATUSES]),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  responseStatus: Type.Optional(Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  test: Type.Optional(Type.Literal(true, { description: "an admin's test of the receiver (a ping, or an example sent): attempted once, never retried, no part of the failure streak (ext)" })),
  attemptLog: Type.Optional(Type.Array(AttemptSchema)),
}, { $id: 'Delivery', description: 'One event sent, or to be sent, to one webhook' });

/** A webhook's deliveries at a glance, for a list of webhooks: bounded work per webhook, whatever it has sent. */
export const DeliveryHealthSchema = Type.Object(
  {
    pending: Type.Integer({ description: 'deliveries waiting to be sent' }),
    failed: Type.Integer({ description: 'deliveries given up (kept for failedDeliveryRetentionDelayMs)' }),
    lastDelivery: Type.Union([
      Type.Object({
        id: Type.Integer(),
        status: Type.Enum([...DELIVERY_STATUSES]),
        eventType: Type.String(),
        at: Type.String({ format: 'date-time', description: 'when it was sent, else when it last changed' }),
      }),
      Type.Null(),
    ], { description: 'its newest delivery; null when it has none' }),
  },
  { $id: 'DeliveryHealth', description: "A webhook's pending and failed deliveries and its newest one (ext)" },
);

/** One HTTP attempt of a delivery, as its attempt log keeps it. */
export type AttemptLogEntry = Static<typeof AttemptSchema>;
/** A delivery as the API shows it; `attemptLog` only in the read of one. */
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryHealth = Static<typeof DeliveryHealthSchema>;

/** The windows of the health over time: the last hour by minute, the last day by hour, the last week by UTC day. */
export const HEALTH_RANGE_NAMES = ['hour', 'day', 'week'] as const;
export type HealthRange = (typeof HEALTH_RANGE_NAMES)[number];

const attemptCounts = {
  sent: Type.Integer({ description: 'attempts that delivered (a 2xx answer): the delivery is sent' }),
  failed: Type.Integer({ description: 'attempts that failed with no retry left: the delivery is failed' }),
  retried: Type.Integer({ description: 'attempts that failed, the delivery left pending for a retry' }),
};

export const HealthBucketSchema = Type.Object(
  { start: Timestamp, ...attemptCounts },
  { $id: 'HealthBucket', description: 'The attempt outcomes recorded in one minute, hour or day (pings left out)' },
);
export type HealthBucket = Static<typeof HealthBucketSchema>;

export const HealthOverTimeSchema = Type.Object(
  {
    range: Type.Enum([...HEALTH_RANGE_NAMES]),
    webhookId: Type.Union([Type.Integer(), Type.Null()], { description: 'the webhook counted; null: every webhook, deleted ones included' }),
    bucketSeconds: Type.Integer({ description: '60, 3600 or 86400' }),
    from: Timestamp,
    to: Type.String({ format: 'date-time', description: 'the end of the last bucket (the one now falls in), exclusive' }),
    buckets: Type.Array(HealthBucketSchema, { description: 'oldest first, every bucket of the window, empty ones included; aligned on UTC' }),
    totals: Type.Object(
      {
        attempts: Type.Integer({ description: 'sent + failed + retried' }),
        ...attemptCounts,
        successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'sent ÷ attempts; null when there was none' }),
        p95DurationMs: Type.Union([Type.Integer(), Type.Null()], {
          description: '95th percentile of the attempts\' durations, estimated from duration classes about ×1.5 apart; null when there was none',
        }),
      },
      { description: 'the whole window' },
    ),
  },
  { $id: 'HealthOverTime', description: 'Attempt outcomes over time, from counts kept as outcomes are recorded' },
);
export type HealthOverTime = Static<typeof HealthOverTimeSchema>;

/** What the search may filter on: the events deliveries carry, pings included. */
export const SEARCHABLE_EVENT_TYPES = [...EVENT_TYPES, 'ping'] as const;
/**
 * Where a search's page ends: the last delivery's id, and in a search with a time range, its event's time before it
 * (microseconds, as stored): `1234`, `2026-11-25T10:04:05.123456Z/1234`.
 */
export const SEARCH_CURSOR_PATTERN = '^(?:[0-9]{1,16}|\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z/[0-9]{1,16})$';
/** The longest time-range bound, as text. */
const MAX_INSTANT_LENGTH = 64;

/** The search's filters, each optional; all given must hold. In the query string, so a search is a URL to share. */
export const DeliverySearchQuery = Type.Object({
  webhookId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4, description: 'deliveries of this webhook' })),
  eventType: Type.Optional(Type.Enum([...SEARCHABLE_EVENT_TYPES])),
  status: Type.Optional(Type.Enum([...DELIVERY_STATUSES])),
  since: Type.Optional(Type.String({ maxLength: MAX_INSTANT_LENGTH, description: 'ISO 8601: created (its event happened) at or after this instant' })),
  until: Type.Optional(Type.String({ maxLength: MAX_INSTANT_LENGTH, description: 'ISO 8601: created before this instant' })),
  caseId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4, description: 'events about this case' })),
  alertId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4, description: 'events of this alert' })),
  deliveryId: Type.Optional(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the delivery id: the `webhook-id` header its receiver got' }),
  ),
  responseStatus: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'the HTTP status of the receiver\'s last answer' })),
  cursor: Type.Optional(Type.String({ maxLength: 48, pattern: SEARCH_CURSOR_PATTERN, description: 'the nextCursor of the previous page of the same search' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
});
export type DeliverySearchFilters = Static<typeof DeliverySearchQuery>;

export const DeliverySearchPageSchema = Type.Object(
  {
    items: Type.Array(DeliverySchema, { description: 'newest first (by id)' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` for the next page; null on the last page' }),
  },
  { $id: 'DeliverySearchPage', description: 'One page of a search across webhooks' },
);
export type DeliverySearchPage = Static<typeof DeliverySearchPageSchema>;
