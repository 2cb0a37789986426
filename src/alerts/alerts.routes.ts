import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireUser } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, pageOf, Paging, PositiveId, Timestamp } from '../http/schemas.js';
import { SOURCE_KEY_PATTERN } from '../sources/sources.js';
import { createAlert, deleteAlert, findAlert, listAlerts, MAX_DESCRIPTION, MAX_TITLE, toAlert, updateAlert } from './alerts.js';
import { applyCaseAction, CASE_ACTIONS, listCaseActions, MAX_COMMENT_LENGTH } from './case-actions.js';
import { CASE_STATUSES, findCase, listCases, toCase } from './cases.js';
import { MAX_ID_LENGTH, MAX_MATCHES_PER_CALL, MAX_TARGET_IDS, reportMatches } from './matches.js';

const SourceKey = Type.String({ pattern: SOURCE_KEY_PATTERN.source });
const AlertSchema = Type.Object({
  id: Type.Integer(),
  sourceKey: Type.String(),
  title: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'Alert' });
const UserRef = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });
const CaseSchema = Type.Object({
  id: Type.Integer(),
  sourceKey: Type.String(),
  alertId: Type.Integer(),
  hash: Type.String(),
  status: Type.Enum([...CASE_STATUSES]),
  statusUpdateDate: Type.Optional(Timestamp),
  user: Type.Optional(UserRef),
  nodes: Type.Array(Type.String()),
  edges: Type.Array(Type.String()),
  matchCount: Type.Integer(),
  url: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'Case', description: 'A distinct match of an alert, with its status' });
const AlertParams = Type.Object({ sourceKey: SourceKey, alertId: PositiveId });
const CaseParams = Type.Object({ sourceKey: SourceKey, alertId: PositiveId, caseId: PositiveId });
const IdList = Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), { maxItems: MAX_TARGET_IDS });

export interface AlertRoutesOptions {
  db: Database;
  publicBaseUrl: string;
}

export const alertRoutes: FastifyPluginAsyncTypebox<AlertRoutesOptions> = async (app, { db, publicBaseUrl }) => {
  // Alerts
  app.post(
    '/api/admin/:sourceKey/alerts',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'createAlert',
        tags: ['alerts'],
        summary: 'Create an alert',
        params: Type.Object({ sourceKey: SourceKey }),
        body: Type.Object({
          title: Type.String({ minLength: 1, maxLength: MAX_TITLE }),
          description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 201: AlertSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      return reply.status(201).send(await createAlert(db, request.params.sourceKey, request.body));
    },
  );

  app.patch(
    '/api/admin/:sourceKey/alerts/:alertId',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'updateAlert',
        tags: ['alerts'],
        summary: 'Change an alert (later payloads use the new title and description; earlier ones keep theirs)',
        params: AlertParams,
        body: Type.Object({
          title: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TITLE })),
          description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 200: AlertSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { sourceKey, alertId } = request.params;
      return updateAlert(db, sourceKey, alertId, request.body);
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
      return { items: await listAlerts(db, request.params.sourceKey) };
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId',
    { config: { access: 'user' }, schema: { operationId: 'getAlert', tags: ['alerts'], summary: 'One alert', params: AlertParams, response: { 200: AlertSchema, ...errorResponses(400, 401, 404) } } },
    async (request) => {
      requireUser(request);
      const { sourceKey, alertId } = request.params;
      return toAlert(await findAlert(db, sourceKey, alertId));
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
          200: Type.Object({
            counts: Type.Object({ unconfirmed: Type.Integer(), confirmed: Type.Integer(), dismissed: Type.Integer(), 'in-progress': Type.Integer() }),
            cases: Type.Array(CaseSchema),
          }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      requireUser(request);
      const { sourceKey, alertId } = request.params;
      await findAlert(db, sourceKey, alertId);
      const { counts, rows } = await listCases(db, alertId, { ...pageOf(request.query), status: request.query.status });
      return { counts, cases: rows.map((row) => toCase(row, publicBaseUrl)) };
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId',
    { config: { access: 'user' }, schema: { operationId: 'getCase', tags: ['cases'], summary: 'One case', params: CaseParams, response: { 200: CaseSchema, ...errorResponses(400, 401, 404) } } },
    async (request) => {
      requireUser(request);
      const { sourceKey, alertId, caseId } = request.params;
      await findAlert(db, sourceKey, alertId);
      return toCase(await findCase(db, alertId, caseId), publicBaseUrl);
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
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                id: Type.Integer(),
                caseId: Type.Integer(),
                user: Type.Union([UserRef, Type.Null()]),
                action: Type.String(),
                comment: Type.Optional(Type.String()),
                application: Type.Optional(Type.Object({ id: Type.Integer(), name: Type.String() })),
                createdAt: Timestamp,
                updatedAt: Timestamp,
              }),
            ),
          }),
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
