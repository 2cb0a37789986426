import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SettingsStore } from '../config/settings-store.js';
import type { Database } from '../db/database.js';
import { notFound } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { redeliver } from '../outbox/claims.js';
import { enqueuePing } from '../outbox/enqueue.js';
import { renderPing } from '../outbox/events.js';
import { findDelivery } from '../outbox/read-model.js';
import { requireWebhooksEnabled } from '../webhooks/require-enabled.js';
import { DeliveryParams, DeliverySchema, WebhookParams } from '../webhooks/schemas.js';
import { requireWebhook } from '../webhooks/webhooks.js';
import type { DeliveryWorker } from './worker.js';

export interface DeliveryRoutesOptions {
  db: Database;
  settings: SettingsStore;
  worker: DeliveryWorker;
}

/** The operations that send: ping now, and redeliver (contract §4). */
export const deliveryRoutes: FastifyPluginAsyncTypebox<DeliveryRoutesOptions> = async (app, { db, settings, worker }) => {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.post(
    '/api/admin/webhooks/:webhookId/ping',
    {
      config: { access: 'admin' },
      schema: {
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
    '/api/admin/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    {
      config: { access: 'admin' },
      schema: {
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
      return findDelivery(db, webhookId, deliveryId);
    },
  );
};
