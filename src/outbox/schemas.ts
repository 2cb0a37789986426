/**
 * The outbox's API shapes (a delivery and its attempts) and the names they use (event types, delivery statuses),
 * declared once, in a file of no Node import: the shapes of other domains take them, and the console reads their
 * types.
 */
import { Type, type Static } from 'typebox';
import { EVENT_PAYLOAD_MARK, Timestamp } from '../http/schemas.js';
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
