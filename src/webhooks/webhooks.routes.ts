import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { SettingsStore } from '../config/settings-store.js';
import type { Database } from '../db/database.js';
import { featureDisabled } from '../errors.js';
import { BigId, errorResponses, MAX_INT4, Paging, PositiveId, Timestamp } from '../http/schemas.js';
import { DELIVERY_STATUSES, findDelivery, listDeliveries, type DeliveryStatus } from './deliveries.js';
import { EVENT_TYPES } from './payloads.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhookTarget,
  listWebhooks,
  listWebhooksPage,
  MAX_SECRET_LENGTH,
  MAX_URL_LENGTH,
  MIN_SECRET_LENGTH,
  type WebhookEvent,
} from './webhooks.js';

const WebhookEventSchema = Type.Object({ eventType: Type.Enum([...EVENT_TYPES]), sourceKey: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) });
const WebhookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(WebhookEventSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const AttemptSchema = Type.Object({
  attemptedAt: Timestamp,
  durationMs: Type.Integer(),
  responseStatus: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  responseBody: Type.Optional(Type.String()),
});
export const DeliverySchema = Type.Object({
  id: Type.Integer(),
  webhookId: Type.Integer(),
  payload: Type.Unknown({ description: 'the exact JSON sent' }),
  sentDate: Type.Union([Timestamp, Type.Null()]),
  error: Type.Optional(Type.String()),
  status: Type.Enum([...DELIVERY_STATUSES]),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  responseStatus: Type.Optional(Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  attemptLog: Type.Optional(Type.Array(AttemptSchema)),
});
export const WebhookParams = Type.Object({ webhookId: PositiveId });
export const DeliveryParams = Type.Object({ webhookId: PositiveId, deliveryId: BigId });

export interface WebhookRoutesOptions {
  db: Database;
  settings: SettingsStore;
}

/** A preHandler for every webhook operation: `feature_disabled` while webhooks.enabled is false. */
export function requireWebhooksEnabled(settings: SettingsStore): () => Promise<void> {
  return async () => {
    if (!settings.webhooks.enabled) throw featureDisabled();
  };
}

/** Webhooks administration (contract §4). Admin only, each route declaring it; all refused while the feature is off. */
export async function webhookRoutes(app: FastifyInstance, { db, settings }: WebhookRoutesOptions): Promise<void> {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.post(
    '/api/admin/webhooks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook; `events` left out means every event on any data source',
        body: Type.Object({
          url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH }),
          secret: Type.String({ minLength: MIN_SECRET_LENGTH, maxLength: MAX_SECRET_LENGTH }),
          events: Type.Optional(Type.Array(WebhookEventSchema, { maxItems: 1000 })),
        }),
        response: { 201: WebhookSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await createWebhook(db, request.body as { url: string; secret: string; events?: WebhookEvent[] })),
  );

  app.get(
    '/api/admin/webhooks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'List webhooks, oldest first (never their secrets)',
        description:
          'Without offset and limit, every webhook as `{items}` (the Linkurious Enterprise answer). With either, one page as ' +
          '`{totalCount, items}` (offset default 0, limit default 20, at most 1000).',
        // No defaults here: whether paging was asked for decides the shape of the answer.
        querystring: Type.Object({
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        }),
        response: {
          200: Type.Object({ totalCount: Type.Optional(Type.Integer({ description: 'only when paged' })), items: Type.Array(WebhookSchema) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { offset, limit } = request.query as { offset?: number; limit?: number };
      if (offset === undefined && limit === undefined) return { items: await listWebhooks(db) };
      return listWebhooksPage(db, { offset: offset ?? 0, limit: limit ?? 20 });
    },
  );

  app.delete(
    '/api/admin/webhooks/:webhookId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook and its deliveries',
        params: WebhookParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteWebhook(db, (request.params as { webhookId: number }).webhookId);
      return reply.status(204).send();
    },
  );

  app.get(
    '/api/admin/webhooks/:webhookId/deliveries',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'Deliveries of a webhook, newest first',
        params: WebhookParams,
        querystring: Type.Object({ ...Paging, status: Type.Optional(Type.Enum([...DELIVERY_STATUSES])) }),
        response: { 200: Type.Object({ totalCount: Type.Integer(), items: Type.Array(DeliverySchema) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params as { webhookId: number };
      await findWebhookTarget(db, webhookId);
      return listDeliveries(db, webhookId, request.query as { offset: number; limit: number; status?: DeliveryStatus });
    },
  );

  app.get(
    '/api/admin/webhooks/:webhookId/deliveries/:deliveryId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'One delivery with its attempt log (ext)',
        params: DeliveryParams,
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId, deliveryId } = request.params as { webhookId: number; deliveryId: number };
      await findWebhookTarget(db, webhookId);
      return findDelivery(db, webhookId, deliveryId);
    },
  );
}
