import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database } from '../db/database.js';
import { errorResponses, PositiveId } from '../http/schemas.js';
import { readHealthOverTime } from '../outbox/health-over-time.js';
import { HealthOverTimeSchema, HEALTH_RANGE_NAMES } from '../outbox/schemas.js';
import { requireWebhooksEnabled } from '../webhooks/require-enabled.js';
import { requireWebhook } from '../webhooks/webhooks.js';

export interface HealthOverTimeRoutesOptions {
  db: Database;
  settings: SettingsStore;
}

/** Delivery health over time (docs/api.md, Health over time). Admin only, declared at registration; refused while the feature is off. */
export const healthOverTimeRoutes: FastifyPluginAsyncTypebox<HealthOverTimeRoutesOptions> = async (app, { db, settings }) => {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.get(
    '/api/admin/deliveries/health',
    {
      schema: {
        operationId: 'getHealthOverTime',
        tags: ['webhooks'],
        summary: 'Attempt outcomes over time (sent, failed, retried) per minute, hour or day, with the success rate and p95 attempt duration (ext)',
        description:
          '`range` hour: the last 60 minutes by minute; day: the last 24 hours by hour; week: the last 7 days by UTC day. Buckets are ' +
          'aligned on UTC and the last one is the one now falls in. One webhook with `webhookId`, else every webhook (deleted ones ' +
          'included). Counted as outcomes are recorded, pings left out: the history outlives the deliveries\' retention.',
        querystring: Type.Object({
          range: Type.Optional(Type.Enum([...HEALTH_RANGE_NAMES], { default: 'hour' })),
          webhookId: Type.Optional(PositiveId),
        }),
        response: { 200: HealthOverTimeSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { range = 'hour', webhookId } = request.query;
      if (webhookId !== undefined) await requireWebhook(db, webhookId);
      return readHealthOverTime(db, range, webhookId ?? null);
    },
  );
};
