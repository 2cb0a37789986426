import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sourceAccessOf } from '../access/access-hook.js';
import { requireUser } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses } from '../http/schemas.js';
import { actOnCases, BulkCaseActionBody } from './bulk-case-actions.js';
import { alertUsers, assignCases } from './case-assignment.js';
import { readInbox } from './case-inbox.js';
import { AlertUserSchema, AssignCasesBody, BulkAssignCasesBody, BulkCaseActionAnswer, InboxPageSchema, InboxQuery } from './inbox-schemas.js';
import { AlertParams, SourceKey } from './schemas.js';

export interface CaseInboxRoutesOptions {
  db: Database;
  publicBaseUrl: string;
}

/**
 * The analysts' case inbox and what it does to many cases (docs/api.md, "Case inbox"), for any signed-in user
 * (declared at registration), each within the alerts their groups let them read.
 */
export const caseInboxRoutes: FastifyPluginAsyncTypebox<CaseInboxRoutesOptions> = async (app, { db, publicBaseUrl }) => {
  app.get(
    '/api/cases',
    {
      schema: {
        operationId: 'listInboxCases',
        tags: ['cases'],
        summary: 'Every case the caller may read, across alerts and data sources, filtered and sorted, a page at a time (ext)',
        description:
          'Filters, all optional, all must hold: `status` (comma-separated), `sourceKey`, `alertId`, `assignee` (`me`, `none` or a user id), ' +
          '`createdFrom`/`createdTo` and `updatedFrom`/`updatedTo` (ISO 8601; from included, to excluded), and with `alertId`, ' +
          "`column.<name>=<value>`: the case's newest match has that value in that column of the alert. `sort` (updatedAt, createdAt, id) " +
          'and `direction` (desc, asc); `limit` (50, at most 200). A page ends with `nextCursor`: pass it as `cursor`, with the same ' +
          'query, for the next. Paging never shows a case twice; a case that changes meanwhile may move past the cursor. No total count.',
        querystring: InboxQuery,
        response: { 200: InboxPageSchema, ...errorResponses(400, 401) },
      },
    },
    async (request) => readInbox(db, requireUser(request), request.query as Record<string, unknown>, publicBaseUrl),
  );

  app.post(
    '/api/cases/action',
    {
      schema: {
        operationId: 'actOnCases',
        tags: ['cases'],
        summary: 'One action on up to 100 cases: each case changed on its own, as POST …/cases/:caseId/action does (its own caseStatusChange), with its outcome (ext)',
        body: BulkCaseActionBody,
        response: { 200: BulkCaseActionAnswer, ...errorResponses(400, 401) },
      },
    },
    async (request) => ({ results: await actOnCases(db, publicBaseUrl, requireUser(request), request.body) }),
  );

  // Before the alert routes' /api/:sourceKey/alerts/:alertId/…: `cases` is a static segment, which the router takes
  // before the integer parameter whatever the order of registration; the schema would refuse `cases` as an alertId anyway.
  app.post(
    '/api/:sourceKey/alerts/cases/assignments',
    {
      schema: {
        operationId: 'bulkAssignCases',
        tags: ['cases'],
        summary: "Assign cases of several alerts of the source to a user who may read them (LKE's bulkAssignCases); assignedUserId null unassigns them",
        params: Type.Object({ sourceKey: SourceKey }),
        body: BulkAssignCasesBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { casesPerAlert, assignedUserId } = request.body;
      await assignCases(db, requireUser(request), sourceAccessOf(request), { casesPerAlert, userId: assignedUserId, userField: 'assignedUserId' });
      return noContent(reply);
    },
  );

  app.post(
    '/api/:sourceKey/alerts/:alertId/cases/assignments',
    {
      schema: {
        operationId: 'assignCases',
        tags: ['cases'],
        summary: "Assign cases of the alert to a user who may read it (LKE's assignCases); userId null unassigns them",
        params: AlertParams,
        body: AssignCasesBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { caseIds, userId } = request.body;
      await assignCases(db, requireUser(request), sourceAccessOf(request), { casesPerAlert: [{ alertId: request.params.alertId, caseIds }], userId, userField: 'userId' });
      return noContent(reply);
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/users',
    {
      schema: {
        operationId: 'getAlertUsers',
        tags: ['cases'],
        summary: "The users who may read the alert, whom its cases may be assigned to (LKE's getAlertUsers)",
        params: AlertParams,
        response: { 200: Type.Array(AlertUserSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      requireUser(request);
      return alertUsers(db, request.params.sourceKey, request.params.alertId);
    },
  );
};
