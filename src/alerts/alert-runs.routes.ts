import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAction } from '../access/access-hook.js';
import { requireUser } from '../auth/authenticate.js';
import { AppError } from '../errors.js';
import { errorResponses, pageOf, Paging } from '../http/schemas.js';
import type { QuerySlots } from '../sources/query-slots.js';
import { previewAlertQuery } from './alert-preview.js';
import { readRunHistory } from './alert-reads.js';
import type { RunDependencies } from './alert-run.js';
import { listCaseMatches } from './cases.js';
import { askForRun } from './manual-run.js';
import { AlertParams, AlertRunSchema, CaseParams, MatchSchema, PreviewAnswer, PreviewBody, SourceKey } from './schemas.js';

export interface AlertRunRoutesOptions {
  run: RunDependencies;
  /** Where this process runs the schedule: told at once of a run asked for without waiting. */
  kick?: (() => void) | undefined;
  /** The interactive queries each user has running, shared with run/query. */
  slots: QuerySlots;
}

export const alertRunRoutes: FastifyPluginAsyncTypebox<AlertRunRoutesOptions> = async (app, { run, kick, slots }) => {
  const { db, graphs, limits } = run;
  const preview = { db, graphs, limits, slots };

  app.post(
    '/api/admin/:sourceKey/alerts/:alertId/run',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'runAlert',
        tags: ['alerts'],
        summary: 'Run an alert now: with waitForRun, answers when the run is recorded; otherwise as soon as it is asked for',
        params: AlertParams,
        body: Type.Optional(Type.Object({ waitForRun: Type.Optional(Type.Boolean()) })),
        response: { 200: Type.Object({ alreadyRunning: Type.Boolean() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { sourceKey, alertId } = request.params;
      return askForRun(run, kick, requireUser(request), { sourceKey, alertId, waitForRun: request.body?.waitForRun ?? false });
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/runs',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listAlertRuns',
        tags: ['alerts'],
        summary: 'The runs of an alert, newest first (ext)',
        params: AlertParams,
        querystring: Type.Object(Paging),
        response: { 200: Type.Object({ items: Type.Array(AlertRunSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      requireUser(request);
      return readRunHistory(db, request.params.sourceKey, request.params.alertId, pageOf(request.query));
    },
  );

  app.post(
    '/api/:sourceKey/graph/alertPreview',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'alertPreview',
        tags: ['alerts'],
        summary: 'What an alert query would find: each row as a match (its nodes, edges and column values), recording nothing',
        description:
          'Needs the `rawReadQuery` right on the source. Each row\'s nodes and edges leave out what the caller\'s groups may not ' +
          'read; `columns` only for a caller who reads the whole graph (403 forbidden otherwise): a column is computed by the query.',
        params: Type.Object({ sourceKey: SourceKey }),
        body: PreviewBody,
        response: { 200: PreviewAnswer, ...errorResponses(400, 401, 403, 429, 503, 504) },
      },
    },
    async (request) => {
      const principal = requireUser(request);
      const access = requireAction(request, 'rawReadQuery', 'an alert preview');
      const columns = request.body.columns ?? [];
      // A column's value is whatever the query computed, from anything it read: a hidden category's property, a count
      // of hidden nodes. Unlike a node or an edge, nothing in the value says where it came from, so it cannot be
      // filtered; and a column blanked to null would read as the query's own null. Refused, then, naming why, for a
      // caller who does not read the whole graph; their preview without columns still shows each row's readable items.
      if (columns.length > 0 && !access.readsWholeGraph) {
        throw new AppError('forbidden', `a preview's columns are computed by its query from anything it reads, and your groups may not read the whole graph of data source "${access.sourceKey}": preview without columns`, undefined, 'columns');
      }
      return previewAlertQuery(preview, principal, access, request.body);
    },
  );

  app.get(
    '/api/:sourceKey/alerts/:alertId/cases/:caseId/matches',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listCaseMatches',
        tags: ['cases'],
        summary: 'The matches of a case with their column values, newest first (ext)',
        params: CaseParams,
        querystring: Type.Object(Paging),
        response: { 200: Type.Object({ items: Type.Array(MatchSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      requireUser(request);
      return listCaseMatches(db, request.params, pageOf(request.query));
    },
  );
};
