import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database } from '../db/database.js';
import { notFound } from '../errors.js';
import { MAX_WEBHOOKS } from '../limits.js';
import { errorResponses, PositiveId } from '../http/schemas.js';
import { timeRangeOf } from '../http/time-range.js';
import { redeliver } from '../outbox/claims.js';
import { enqueuePing } from '../outbox/enqueue.js';
import { examplePayload } from '../outbox/event-examples.js';
import { renderPing } from '../outbox/events.js';
import { findDelivery } from '../outbox/read-model.js';
import { redeliverFailed } from '../outbox/redeliver-many.js';
import { requireWebhooksEnabled } from '../webhooks/require-enabled.js';
import { DeliverySchema, EVENT_TYPES } from '../outbox/schemas.js';
import { DeliveryParams, WebhookParams } from '../webhooks/schemas.js';
import { requireWebhook } from '../webhooks/webhooks.js';
import { wakeWorkersIfImmediate } from './wake-up.js';
import type { DeliveryWorker } from './worker.js';

export interface DeliveryRoutesOptions {
  db: Database;
  settings: SettingsStore;
  worker: DeliveryWorker;
}

const BulkRedeliverFields = {
  status: Type.Literal('failed', { description: 'which deliveries: the failed ones (the only kind that waits for a person)' }),
  since: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601: only deliveries that ended failed at or after this instant' })),
  until: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601: only deliveries that ended failed before this instant' })),
};
const BulkRedeliverAnswer = Type.Object({ count: Type.Integer({ description: 'deliveries made pending and due now' }) });

/** The operations that send: ping and send an example now, and redeliver (docs/api.md, Deliveries). */
export const deliveryRoutes: FastifyPluginAsyncTypebox<DeliveryRoutesOptions> = async (app, { db, settings, worker }) => {
  app.addHook('preHandler', requireWebhooksEnabled(settings));
  const redeliveredNow = (count: number) => {
    if (count > 0) wakeWorkersIfImmediate(settings.webhooks.deliveryFrequency);
    return { count };
  };

  app.post(
    '/api/admin/webhooks/:webhookId/ping',
    {
      schema: {
        operationId: 'pingWebhook',
        tags: ['webhooks'],
        summary: 'Send a ping to the webhook now (whatever deliveryFrequency says, enabled or not) and answer the delivery after that one attempt; never retried',
        params: WebhookParams,
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      await requireWebhook(db, webhookId);
      const ping = await enqueuePing(db, webhookId, renderPing(webhookId), worker.leaseMs);
      await worker.attemptNow(ping);
      return findDelivery(db, webhookId, ping.id);
    },
  );

  app.post(
    '/api/admin/webhooks/:webhookId/example',
    {
      schema: {
        operationId: 'sendExample',
        tags: ['webhooks'],
        summary: 'Send the documented example payload of an event type to the webhook now, recorded and attempted like a ping (ext)',
        description:
          'The payload is the example of docs/api.md (Events and payloads), signed with the webhook\'s secrets, whether the webhook ' +
          'subscribes to the event type or not and whether it is enabled or not; one attempt, never retried, no part of the failure streak.',
        params: WebhookParams,
        body: Type.Object({ eventType: Type.Enum([...EVENT_TYPES], { description: 'which event to send an example of' }) }),
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      const { eventType } = request.body;
      await requireWebhook(db, webhookId);
      const example = await enqueuePing(db, webhookId, examplePayload(eventType), worker.leaseMs, eventType);
      await worker.attemptNow(example);
      return findDelivery(db, webhookId, example.id);
    },
  );

  app.post(
    '/api/admin/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverDelivery',
        tags: ['webhooks'],
        summary: 'Make a delivery pending and due now, its retry schedule started afresh, its attempt log kept (ext)',
        params: DeliveryParams,
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId, deliveryId } = request.params;
      await requireWebhook(db, webhookId);
      if (!(await redeliver(db, webhookId, deliveryId))) throw notFound('delivery', deliveryId);
      const answer = await findDelivery(db, webhookId, deliveryId);
      // Once the answer is read: it shows the delivery as this call left it, pending and due.
      wakeWorkersIfImmediate(settings.webhooks.deliveryFrequency);
      return answer;
    },
  );

  // Bulk recovery after a receiver's outage: in batches of their own (outbox/redeliver-many.ts), so a million rows
  // never hold one transaction; idempotent (a second call finds nothing failed) and safe while workers run.
  app.post(
    '/api/admin/webhooks/:webhookId/deliveries/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'Make every failed delivery of a webhook (optionally those that failed between since and until) pending and due now (ext)',
        params: WebhookParams,
        body: Type.Object(BulkRedeliverFields),
        response: { 200: BulkRedeliverAnswer, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      await requireWebhook(db, webhookId);
      return redeliveredNow(await redeliverFailed(db, { webhookIds: [webhookId], ...timeRangeOf(request.body, 'field') }));
    },
  );

  app.post(
    '/api/admin/deliveries/redeliver',
    {
      schema: {
        operationId: 'redeliverDeliveries',
        tags: ['webhooks'],
        summary: 'Make every failed delivery (of the webhooks in webhookIds, when given; failed between since and until, when given) pending and due now (ext)',
        body: Type.Object({ ...BulkRedeliverFields, webhookIds: Type.Optional(Type.Array(PositiveId, { minItems: 1, maxItems: MAX_WEBHOOKS })) }),
        response: { 200: BulkRedeliverAnswer, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => redeliveredNow(await redeliverFailed(db, { webhookIds: request.body.webhookIds, ...timeRangeOf(request.body, 'field') })),
  );
};
