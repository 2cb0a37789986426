import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, Paging, PagingParams, pageOf } from '../http/schemas.js';
import type { ReceiverPolicy } from '../network/receiver-policy.js';
import { deliveryHealth, findDelivery, listDeliveries } from '../outbox/read-model.js';
import { DELIVERY_STATUSES, DeliverySchema } from '../outbox/schemas.js';
import type { Keyring } from '../secrets/keyring.js';
import { requireWebhooksEnabled } from './require-enabled.js';
import { DeliveryParams, SecretRotationSchema, WebhookDetailsSchema, WebhookEventSchema, WebhookListItemSchema, WebhookParams, WebhookSchema, type WebhookListItem } from './schemas.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  listWebhooksPage,
  MAX_DESCRIPTION_LENGTH,
  MAX_SECRET_LENGTH,
  MAX_SECRET_OVERLAP_MS,
  MAX_URL_LENGTH,
  MIN_SECRET_LENGTH,
  requireWebhook,
  rotateWebhookSecret,
  updateWebhook,
} from './webhooks.js';

const Url = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH });
const Events = Type.Array(WebhookEventSchema, { maxItems: 1000 });
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH });

export interface WebhookRoutesOptions {
  db: Database;
  settings: SettingsStore;
  /** Checked when a webhook is created or its URL changed (RECEIVER_*). */
  receiverPolicy: ReceiverPolicy;
  /** Seals the secrets it is given (creation, rotation) before they are stored. */
  keyring: Keyring;
  /** Told of each webhook deleted here (its metrics go with it). */
  onDeleted?: ((webhookId: number) => void) | undefined;
}

/** Webhooks administration (docs/api.md, Webhooks). Admin only, each route declaring it; all refused while the feature is off. */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, { db, settings, receiverPolicy, keyring, onDeleted }) => {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.post(
    '/api/admin/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Register a webhook; `events` left out means newCase, newMatch and caseStatusChange on any data source',
        body: Type.Object({
          url: Url,
          secret: Type.String({ minLength: MIN_SECRET_LENGTH, maxLength: MAX_SECRET_LENGTH }),
          events: Type.Optional(Events),
          description: Type.Optional(Description),
        }),
        response: { 201: WebhookSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await createWebhook(db, request.body, { receiverPolicy, keyring })),
  );

  app.get(
    '/api/admin/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhooks, oldest first (never their secrets)',
        description:
          'Without offset, limit and q, every webhook as `{items}` (the Linkurious Enterprise answer). With any, one page as ' +
          '`{totalCount, items}` (offset default 0, limit default 20, at most 1000), of the webhooks whose URL or description ' +
          'contains `q` (any case) when it is given. With `health=true`, each webhook ' +
          'also has its `health`: pending and failed delivery counts and its newest delivery, for all of them in one statement.',
        // No defaults here: whether paging was asked for decides the shape of the answer.
        querystring: Type.Object({
          ...PagingParams,
          q: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'only webhooks whose URL or description contains this, in any case (ext)' })),
          health: Type.Optional(Type.Boolean({ description: "add each webhook's delivery health (ext)" })),
        }),
        response: {
          200: Type.Object({ totalCount: Type.Optional(Type.Integer({ description: 'only when paged' })), items: Type.Array(WebhookListItemSchema) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { offset, limit, q, health } = request.query;
      const answer: { totalCount?: number; items: WebhookListItem[] } =
        offset === undefined && limit === undefined && q === undefined ? { items: await listWebhooks(db) } : await listWebhooksPage(db, pageOf(request.query), q);
      if (health) {
        const healthOf = await deliveryHealth(db, answer.items.map((webhook) => webhook.id));
        for (const webhook of answer.items) webhook.health = healthOf.get(webhook.id)!;
      }
      return answer;
    },
  );

  app.get(
    '/api/admin/webhooks/:webhookId',
    {
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'One webhook, with its delivery counts by status (ext)',
        params: WebhookParams,
        response: { 200: WebhookDetailsSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => findWebhook(db, request.params.webhookId),
  );

  app.patch(
    '/api/admin/webhooks/:webhookId',
    {
      schema: {
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Change a webhook: any of url, events, enabled, description, checked as at creation; all or nothing (ext)',
        description:
          'A new url or events apply to events recorded from then on; recorded deliveries keep their payload and go to the ' +
          'current url. Disabled, its deliveries are still recorded but none is sent; enabled again, what waited is sent, oldest first.',
        params: WebhookParams,
        body: Type.Object({
          url: Type.Optional(Url),
          events: Type.Optional(Events),
          enabled: Type.Optional(Type.Boolean()),
          description: Type.Optional(Description),
        }),
        response: { 200: WebhookDetailsSchema, ...errorResponses(400, 401, 403, 404) },
      },
      // Unknown fields are dropped by the validator, as on every route; a secret is refused instead, so that nobody
      // believes it changed: it changes by rotation, which keeps the previous one signing meanwhile.
      preValidation: async (request) => {
        if (typeof request.body === 'object' && request.body !== null && Object.hasOwn(request.body, 'secret')) {
          throw invalidParameter('secret cannot be changed by PATCH: rotate it with POST /api/admin/webhooks/:webhookId/secret', 'secret');
        }
      },
    },
    async (request) => updateWebhook(db, request.params.webhookId, request.body, { receiverPolicy, actor: request.principal!.username }),
  );

  app.post(
    '/api/admin/webhooks/:webhookId/secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'Rotate the secret: the previous one keeps signing besides the new one for overlapMs (ext)',
        description:
          'Without `secret`, one is generated (32 random bytes, base64url) and answered this once. During the overlap ' +
          '`webhook-signature` carries both signatures (`v1,<new> v1,<previous>`) and `X-Payload-HMAC` the new secret\'s.',
        params: WebhookParams,
        body: Type.Object({
          secret: Type.Optional(Type.String({ minLength: MIN_SECRET_LENGTH, maxLength: MAX_SECRET_LENGTH })),
          overlapMs: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_SECRET_OVERLAP_MS, description: 'default 86400000 (24 h); 0 drops the previous secret at once' }),
          ),
        }),
        response: {
          200: SecretRotationSchema,
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => rotateWebhookSecret(db, request.params.webhookId, request.body, { keyring }),
  );

  app.delete(
    '/api/admin/webhooks/:webhookId',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook and its deliveries',
        params: WebhookParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteWebhook(db, request.params.webhookId);
      onDeleted?.(request.params.webhookId);
      return noContent(reply);
    },
  );

  app.get(
    '/api/admin/webhooks/:webhookId/deliveries',
    {
      schema: {
        operationId: 'listDeliveries',
        tags: ['webhooks'],
        summary: 'Deliveries of a webhook, newest first',
        params: WebhookParams,
        querystring: Type.Object({ ...Paging, status: Type.Optional(Type.Enum([...DELIVERY_STATUSES])) }),
        response: { 200: Type.Object({ totalCount: Type.Integer(), items: Type.Array(DeliverySchema) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      await requireWebhook(db, webhookId);
      return listDeliveries(db, webhookId, { ...pageOf(request.query), status: request.query.status });
    },
  );

  app.get(
    '/api/admin/webhooks/:webhookId/deliveries/:deliveryId',
    {
      schema: {
        operationId: 'getDelivery',
        tags: ['webhooks'],
        summary: 'One delivery with its attempt log (ext)',
        params: DeliveryParams,
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId, deliveryId } = request.params;
      await requireWebhook(db, webhookId);
      return findDelivery(db, webhookId, deliveryId);
    },
  );
};
