import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireUser } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, pageOf, Paging } from '../http/schemas.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import { alertQueryChecker } from './alert-check.js';
import { createAlert, deleteAlert, findAlert, listAlerts, loadAlert, updateAlert, type AlertLimits } from './alerts.js';
import { populateCase } from './case-graph.js';
import { applyCaseAction, CASE_ACTIONS, listCaseActions, MAX_COMMENT_LENGTH } from './case-actions.js';
import { findCase, listCases, newestColumns, toCase } from './cases.js';
import { MAX_ID_LENGTH, MAX_MATCHES_PER_CALL, reportMatches } from './matches.js';
import { MAX_TARGET_IDS } from './target.js';
import { AlertParams, AlertSchema, CASE_STATUSES, CaseActionSchema, CaseListSchema, CaseParams, CreateAlertBody, PopulatedCaseSchema, SourceKey, UpdateAlertBody } from './schemas.js';

const IdList = Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { maxItems: MAX_TARGET_IDS });

export interface AlertRoutesOptions {
  db: Database;
  publicBaseUrl: string;
  graphs: GraphRegistry;
  limits: AlertLimits;
}

export const alertRoutes: FastifyPluginAsyncTypebox<AlertRoutesOptions> = async (app, { db, publicBaseUrl, graphs, limits }) => {
  const check = alertQueryChecker(db, graphs);
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
      return reply.status(201).send(await createAlert(db, request.params.sourceKey, request.body, limits, check));
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
      return updateAlert(db, sourceKey, alertId, request.body, limits, check);
    },
  );

  app.get(
    '/api/:sourceKey/alerts',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listAlerts',
        tags: ['alerts'],
        summary: 'List the alerts of a data source',
        params: Type.Object({ sourceKey: SourceKey }),
        response: { 200: Type.Object({ items: Type.Array(AlertSchema) }), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      requireUser(request);
      return { items: await listAlerts(db, request.params.sourceKey, limits) };
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId',
    { config: { access: 'user' }, schema: { operationId: 'getAlert', tags: ['alerts'], summary: 'One alert', params: AlertParams, response: { 200: AlertSchema, ...errorResponses(400, 401, 404) } } },
    async (request) => {
      requireUser(request);
      const { sourceKey, alertId } = request.params;
      return loadAlert(db, await findAlert(db, sourceKey, alertId), limits);
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
      await deleteAlert(db, sourceKey, alertId);
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
      const { sourceKey, alertId } = request.params;
      await findAlert(db, sourceKey, alertId);
      const { counts, rows } = await listCases(db, alertId, { ...pageOf(request.query), status: request.query.status });
      const columns = await newestColumns(db, rows.map((row) => row.id));
      return { counts, cases: rows.map((row) => ({ ...toCase(row, publicBaseUrl), columns: columns.get(row.id) ?? {} })) };
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'getCase',
        tags: ['cases'],
        summary: "One case; on a source with a graph, with its target's nodes and edges as the graph has them now (LKE's populated case)",
        params: CaseParams,
        response: { 200: PopulatedCaseSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      requireUser(request);
      const { sourceKey, alertId, caseId } = request.params;
      await findAlert(db, sourceKey, alertId);
      const kase = toCase(await findCase(db, alertId, caseId), publicBaseUrl);
      return { ...kase, ...(await populateCase(db, graphs, sourceKey, kase)) };
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
      const { sourceKey, alertId, caseId } = request.params;
      await findAlert(db, sourceKey, alertId);
      await findCase(db, alertId, caseId);
      return { items: await listCaseActions(db, caseId) };
    },
  );
};
