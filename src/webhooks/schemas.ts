import { Type, type Static } from 'typebox';
import { BigId, EVENT_PAYLOAD_MARK, PositiveId, Timestamp } from '../http/schemas.js';
import { EVENT_TYPES } from '../outbox/events.js';
import { DELIVERY_STATUSES } from '../outbox/read-model.js';
import { MAX_SOURCE_KEY_LENGTH } from '../sources/sources.js';

/**
 * The API shapes of webhooks and their deliveries, declared once: the routes answer them and the types are derived
 * from them (webhooks.ts shows a webhook as `Webhook`).
 */

export const WebhookEventSchema = Type.Object({
  eventType: Type.Enum([...EVENT_TYPES]),
  sourceKey: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SOURCE_KEY_LENGTH })),
});
export type WebhookEvent = Static<typeof WebhookEventSchema>;

const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** The Linkurious Enterprise webhook (id, url, events, createdAt, updatedAt) and what this service adds to it. */
const webhookFields = {
  id: Type.Integer(),
  url: Type.String(),
  description: Type.String({ description: '"" when none was given' }),
  events: Type.Array(WebhookEventSchema),
  enabled: Type.Boolean(),
  disabledAt: NullableTimestamp,
  disabledReason: Type.Union([Type.String({ description: '"by <username>" or "automatically after …"' }), Type.Null()]),
  failingSince: Type.Union([Timestamp, Type.Null()], { description: 'since when its attempts have all failed (the failure streak); null when the last one succeeded or none failed' }),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], { description: 'until when the secret before the last rotation still signs' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
export const WebhookSchema = Type.Object(webhookFields, { $id: 'Webhook', description: 'A webhook (never its secret)' });
/** A webhook as the API shows it: never its secret. */
export type Webhook = Static<typeof WebhookSchema>;

export const WebhookDetailsSchema = Type.Object({
  ...webhookFields,
  deliveryCounts: Type.Object(
    { pending: Type.Integer(), sent: Type.Integer(), failed: Type.Integer() },
    { description: 'its deliveries by status: what deleting it takes with it' },
  ),
}, { $id: 'WebhookDetails', description: 'A webhook with its delivery counts' });
/** The read of one webhook: what deleting it would take with it besides. */
export type WebhookDetails = Static<typeof WebhookDetailsSchema>;

/** The answer of a secret rotation. */
export const SecretRotationSchema = Type.Object({
  webhookId: Type.Integer(),
  secret: Type.Optional(Type.String({ description: 'only when generated: shown this once' })),
  previousSecretExpiresAt: NullableTimestamp,
});
export type SecretRotation = Static<typeof SecretRotationSchema>;

/** Shapes shared by the webhook routes and the delivery routes (ping, redeliver). */
export const WebhookParams = Type.Object({ webhookId: PositiveId });
export const DeliveryParams = Type.Object({ webhookId: PositiveId, deliveryId: BigId });

const AttemptSchema = Type.Object({
  attemptedAt: Timestamp,
  url: Type.Optional(Type.String({ description: 'where this attempt went (absent from attempts made before it was recorded)' })),
  durationMs: Type.Integer(),
  responseStatus: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  responseBody: Type.Optional(Type.String()),
}, { $id: 'DeliveryAttempt', description: 'One HTTP attempt of a delivery' });

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
  attemptLog: Type.Optional(Type.Array(AttemptSchema)),
}, { $id: 'Delivery', description: 'One event sent, or to be sent, to one webhook' });
