import { Type } from 'typebox';
import { BigId, EVENT_PAYLOAD_MARK, PositiveId, Timestamp } from '../http/schemas.js';
import { DELIVERY_STATUSES } from '../outbox/read-model.js';

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
