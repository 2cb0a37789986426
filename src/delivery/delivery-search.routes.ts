import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SettingsStore } from '../settings/settings-store.js';
import type { Database } from '../db/database.js';
import { DEFAULT_PAGE_SIZE, errorResponses } from '../http/schemas.js';
import { timeRangeOf } from '../http/time-range.js';
import { searchDeliveries } from '../outbox/delivery-search.js';
import { DeliverySearchPageSchema, DeliverySearchQuery } from '../outbox/schemas.js';
import { requireWebhooksEnabled } from '../webhooks/require-enabled.js';

export interface DeliverySearchRoutesOptions {
  db: Database;
  settings: SettingsStore;
}

/** The search across webhooks (docs/api.md, Searching deliveries). Admin only, declared at registration; refused while the feature is off. */
export const deliverySearchRoutes: FastifyPluginAsyncTypebox<DeliverySearchRoutesOptions> = async (app, { db, settings }) => {
  app.addHook('preHandler', requireWebhooksEnabled(settings));

  app.get(
    '/api/admin/deliveries',
    {
      schema: {
        operationId: 'searchDeliveries',
        tags: ['webhooks'],
        summary: 'Search the deliveries of every webhook, newest first, one page at a time (ext)',
        description:
          'Every filter is optional and all given must hold. Newest first: by id, or with `since`/`until` by the time the event ' +
          'happened, then id. A page ends with `nextCursor`: pass it as `cursor`, with the same filters, for the next one; ' +
          'deliveries recorded meanwhile never move the pages after the first. No total count.',
        querystring: DeliverySearchQuery,
        response: { 200: DeliverySearchPageSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { since, until, limit, ...filters } = request.query;
      return searchDeliveries(db, { ...filters, ...timeRangeOf({ since, until }, 'query parameter'), limit: limit ?? DEFAULT_PAGE_SIZE });
    },
  );
};
