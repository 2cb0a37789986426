import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sourceAccessOf } from '../access/access-hook.js';
import { requireUser } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, pageOf, Paging } from '../http/schemas.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import type { QuerySlots } from '../sources/query-slots.js';
import { alertQueryChecker } from './alert-check.js';
import { readAlert } from './alert-reads.js';
import { createAlert, deleteAlert, listAlerts, updateAlert, type AlertLimits } from './alerts.js';
import { CaseDrawings, MAX_CASE_GRAPH_PAGE, populatedCase } from './case-graph.js';
import { applyCaseAction, CASE_ACTIONS, MAX_COMMENT_LENGTH } from './case-actions.js';
import { caseActionLog, listAlertCases } from './cases.js';
import { MAX_ID_LENGTH, MAX_MATCHES_PER_CALL, reportMatches } from './matches.js';
import { MAX_TARGET_IDS } from '../graph/match-identity.js';
import { AlertParams, AlertSchema, CASE_STATUSES, CaseActionSchema, CaseListSchema, CaseParams, CreateAlertBody, PopulatedCaseSchema, SourceKey, UpdateAlertBody } from './schemas.js';

const IdList = Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { maxItems: MAX_TARGET_IDS });

export interface AlertRoutesOptions {
  db: Database;
  publicBaseUrl: string;
  graphs: GraphRegistry;
  limits: AlertLimits;
  /** The interactive graph queries each user has running (query-slots.ts): a case's drawing takes one. */
  slots: QuerySlots;
}

export const alertRoutes: FastifyPluginAsyncTypebox<AlertRoutesOptions> = async (app, { db, publicBaseUrl, graphs, limits, slots }) => {
  const check = alertQueryChecker(db, graphs);
  const drawings = new CaseDrawings(db, graphs, slots);
  // Alerts
  app.post(
    '/api/admin/:sourceKey/alerts',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createAlert',
        tags: ['alerts'],
        summary: 'Create an alert; its queries are checked on the graph first (they must parse, only read, and return target and columns)',
        params: Type.Object({ sourceKey: SourceKey }),
        body: CreateAlertBody,
        response: { 201: AlertSchema, ...errorResponses(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      return reply.status(201).send(await createAlert(db, request.params.sourceKey, request.body, limits, check, requireUser(request)));
    },
  );

  app.patch(
    '/api/admin/:sourceKey/alerts/:alertId',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'updateAlert',
        tags: ['alerts'],
        summary: 'Change an alert; `queries` takes LKE\'s operations (create, update, delete). Its cases stay (later payloads use the new title and description; earlier ones keep theirs)',
        params: AlertParams,
        body: UpdateAlertBody,
        response: { 200: AlertSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { sourceKey, alertId } = request.params;
      return updateAlert(db, sourceKey, alertId, request.body, limits, check, requireUser(request));
    },
  );

  // The alerts of a source, a page at a time (`offset`, `limit` as LKE's client sends them): for any signed-in user,
  // and at LKE's admin path for Admins.
  const AlertList = Type.Object({ totalCount: Type.Integer(), items: Type.Array(AlertSchema) });
  for (const [path, access, operationId] of [
    ['/api/:sourceKey/alerts', 'user', 'listAlerts'],
    ['/api/admin/:sourceKey/alerts', 'admin', 'listAlertsAsAdmin'],
  ] as const) {
    app.get(
      path,
      {
        config: { access },
        schema: {
          operationId,
          tags: ['alerts'],
          summary: 'List the alerts of a data source, oldest first, a page at a time (offset, limit), with how many there are',
          params: Type.Object({ sourceKey: SourceKey }),
          querystring: Type.Object(Paging),
          response: { 200: AlertList, ...errorResponses(400, 401, ...(access === 'admin' ? [403] : [])) },
        },
      },
      async (request) => {
        requireUser(request);
        const readable = access === 'user' ? sourceAccessOf(request).alerts : 'all';
        return listAlerts(db, request.params.sourceKey, limits, pageOf(request.query), readable);
      },
    );
  }

  app.get(
    '/api/:sourceKey/alerts/:alertId',
    { config: { access: 'user' }, schema: { operationId: 'getAlert', tags: ['alerts'], summary: 'One alert', params: AlertParams, response: { 200: AlertSchema, ...errorResponses(400, 401, 404) } } },
    async (request) => {
      requireUser(request);
      return readAlert(db, request.params.sourceKey, request.params.alertId, limits);
    },
  );

  app.delete(
    '/api/admin/:sourceKey/alerts/:alertId',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'deleteAlert',
        tags: ['alerts'],
        summary: 'Delete an alert and its cases',
        params: AlertParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { sourceKey, alertId } = request.params;
      await deleteAlert(db, sourceKey, alertId, requireUser(request));
      return noContent(reply);
    },
  );

  // Matches, reported by the alert runner
  app.post(
    '/api/admin/:sourceKey/alerts/:alertId/matches',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'reportMatches',
        tags: ['alerts'],
        summary: 'Report matches of an alert (ext): creates or updates cases, in one transaction, answering one entry per match',
        params: AlertParams,
        body: Type.Object({
          matches: Type.Array(Type.Object({ nodes: Type.Optional(IdList), edges: Type.Optional(IdList) }), { maxItems: MAX_MATCHES_PER_CALL }),
        }),
        response: {
          200: Type.Object({ cases: Type.Array(Type.Object({ id: Type.Integer(), created: Type.Boolean() })) }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { sourceKey, alertId } = request.params;
      return { cases: await reportMatches(db, publicBaseUrl, sourceKey, alertId, request.body.matches) };
    },
  );

  // Cases
  app.get(
    '/api/:sourceKey/alerts/:alertId/cases',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listCases',
        tags: ['cases'],
        summary: 'Cases of an alert, newest first, with the count of each status',
        params: AlertParams,
        querystring: Type.Object({ ...Paging, status: Type.Optional(Type.Enum([...CASE_STATUSES])) }),
        response: {
          200: CaseListSchema,
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      requireUser(request);
      return listAlertCases(db, publicBaseUrl, request.params.sourceKey, request.params.alertId, { ...pageOf(request.query), status: request.query.status });
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'getCase',
        tags: ['cases'],
        summary: "One case; on a source with a graph, with its target's nodes and edges as the graph has them now (LKE's populated case), a page at a time",
        description:
          'The drawing (`graph`) holds a page of the target\'s nodes then edges: 200 from `graphOffset` (0) unless `graphLimit` says otherwise; ' +
          '`graphPage.nextOffset` is the next page\'s `graphOffset`. Fetching it takes one of the caller\'s graph query slots (429 when all are taken); ' +
          'a page is kept for a minute, and fetched again as soon as the case has a new match.',
        params: CaseParams,
        querystring: Type.Object({
          graphOffset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 * MAX_TARGET_IDS, description: "where the drawing's page starts among the target's nodes then edges (ext)" })),
          graphLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CASE_GRAPH_PAGE, description: "how many of the target's items the drawing's page holds, 200 by default (ext)" })),
        }),
        response: { 200: PopulatedCaseSchema, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { graphOffset: offset, graphLimit: limit } = request.query;
      return populatedCase(drawings, publicBaseUrl, requireUser(request), sourceAccessOf(request), request.params, { offset, limit });
    },
  );

  app.post(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId/action',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'actOnCase',
        tags: ['cases'],
        summary: 'Act on a case: confirm, dismiss, unconfirm, in-progress (each emits caseStatusChange) or comment',
        params: CaseParams,
        body: Type.Object({ action: Type.Enum([...CASE_ACTIONS]), comment: Type.Optional(Type.String({ maxLength: MAX_COMMENT_LENGTH })) }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const actor = requireUser(request);
      await applyCaseAction(db, publicBaseUrl, request.params, actor, request.body);
      return noContent(reply);
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId/actions',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listCaseActions',
        tags: ['cases'],
        summary: 'The action log of a case, oldest first',
        params: CaseParams,
        response: {
          200: Type.Object({ items: Type.Array(CaseActionSchema) }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      requireUser(request);
      return caseActionLog(db, request.params);
    },
  );
};
