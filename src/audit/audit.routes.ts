import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Database } from '../db/database.js';
import { errorResponses } from '../http/schemas.js';
import { readAudit } from './audit-read.js';
import { AuditPageSchema, AuditQuery } from './schemas.js';

export interface AuditRoutesOptions {
  db: Database;
}

/** The audit log, for Admins (docs/api.md, Audit log). Admin only, declared at registration. */
export const auditRoutes: FastifyPluginAsyncTypebox<AuditRoutesOptions> = async (app, { db }) => {
  app.get(
    '/api/admin/audit',
    {
      schema: {
        operationId: 'listAuditEntries',
        tags: ['audit'],
        summary: 'Who changed what on alerts, cases, groups and access rights, newest first, one page at a time (ext)',
        description:
          'Every filter is optional and all given must hold; `targetId` needs `targetType`. `from` is inclusive, `to` exclusive. ' +
          'A page ends with `nextCursor`: pass it as `cursor`, with the same filters, for the next one. No total count. ' +
          'Entries are kept `webhooks.auditRetentionDelayMs` (a year by default).',
        querystring: AuditQuery,
        response: { 200: AuditPageSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => readAudit(db, request.query),
  );
};
