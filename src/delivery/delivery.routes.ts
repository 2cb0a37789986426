import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import { notFound } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import type { SettingsStore } from '../config/settings-store.js';
import { findDelivery } from '../webhooks/deliveries.js';
import { renderPing } from '../webhooks/payloads.js';
import { findWebhookTarget } from '../webhooks/webhooks.js';
import { DeliveryParams, DeliverySchema, requireWebhooksEnabled, WebhookParams } from '../webhooks/webhooks.routes.js';
import { insertClaimedPing, redeliver } from './queue.js';
import type { DeliveryWorker } from './worker.js';

export interface DeliveryRoutesOptions {
  db: Database;
  settings: SettingsStore;
  worker: DeliveryWorker;
}

/** The operations that send: ping now, and redeliver (contract §4). */
export async function deliveryRoutes(app: FastifyInstance, { db, settings, worker }: DeliveryRoutesOptions): Promise<void> {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.post(
    '/api/admin/webhooks/:webhookId/ping',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        summary: 'Send a ping to the webhook now (whatever deliveryFrequency says) and answer the delivery after that one attempt; never retried',
        params: WebhookParams,
        response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params as { webhookId: number };
      await findWebhookTarget(db, webhookId);
      const ping = await insertClaimedPing(db, webhookId, renderPing(webhookId), worker.leaseMs);
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
      const { webhookId, deliveryId } = request.params as { webhookId: number; deliveryId: number };
      await findWebhookTarget(db, webhookId);
      if (!(await redeliver(db, webhookId, deliveryId))) throw notFound('delivery', deliveryId);
      return findDelivery(db, webhookId, deliveryId);
    },
  );
}
