import { Type, type Static } from 'typebox';
import { BigId, PositiveId, Timestamp } from '../http/schemas.js';
import { DeliveryHealthSchema, EVENT_TYPES } from '../outbox/schemas.js';
import { MAX_SOURCE_KEY_LENGTH } from '../sources/schemas.js';

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

export const WebhookListItemSchema = Type.Object(
  { ...webhookFields, health: Type.Optional(DeliveryHealthSchema) },
  { $id: 'WebhookListItem', description: 'A webhook in the list; with `health` when asked for (`health=true`)' },
);
/** A webhook as the list shows it: its deliveries at a glance when asked for. */
export type WebhookListItem = Static<typeof WebhookListItemSchema>;

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
