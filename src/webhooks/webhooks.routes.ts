import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SettingsStore } from '../config/settings-store.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, Paging, PagingParams, pageOf, Timestamp } from '../http/schemas.js';
import { EVENT_TYPES } from '../outbox/events.js';
import { DELIVERY_STATUSES, findDelivery, listDeliveries } from '../outbox/read-model.js';
import { MAX_SOURCE_KEY_LENGTH } from '../sources/sources.js';
import { requireWebhooksEnabled } from './require-enabled.js';
import { DeliveryParams, DeliverySchema, WebhookParams } from './schemas.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhookTarget,
  listWebhooks,
  listWebhooksPage,
  MAX_SECRET_LENGTH,
  MAX_URL_LENGTH,
  MIN_SECRET_LENGTH,
} from './webhooks.js';

const WebhookEventSchema = Type.Object({
  eventType: Type.Enum([...EVENT_TYPES]),
  sourceKey: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SOURCE_KEY_LENGTH })),
});
const WebhookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(WebhookEventSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export interface WebhookRoutesOptions {
  db: Database;
  settings: SettingsStore;
}

/** Webhooks administration (contract §4). Admin only, each route declaring it; all refused while the feature is off. */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, { db, settings }) => {
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
    async (request, reply) => reply.status(201).send(await createWebhook(db, request.body)),
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
        querystring: Type.Object(PagingParams),
        response: {
          200: Type.Object({ totalCount: Type.Optional(Type.Integer({ description: 'only when paged' })), items: Type.Array(WebhookSchema) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      if (request.query.offset === undefined && request.query.limit === undefined) return { items: await listWebhooks(db) };
      return listWebhooksPage(db, pageOf(request.query));
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
      await deleteWebhook(db, request.params.webhookId);
      return noContent(reply);
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
      const { webhookId } = request.params;
      await findWebhookTarget(db, webhookId);
      return listDeliveries(db, webhookId, { ...pageOf(request.query), status: request.query.status });
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
      const { webhookId, deliveryId } = request.params;
      await findWebhookTarget(db, webhookId);
      return findDelivery(db, webhookId, deliveryId);
    },
  );
};
