import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAction } from '../access/access-hook.js';
import { readableGraph } from '../access/graph-filter.js';
import { recordAudit } from '../audit/audit-log.js';
import { requireUser } from '../auth/authenticate.js';
import { AppError, invalidParameter } from '../errors.js';
import { queryRefused } from '../graph/graph-source.js';
import { Subgraph } from '../graph/items.js';
import { errorResponses, pageOf, Paging } from '../http/schemas.js';
import { claimAlert, runClaimedAlert, type RunDependencies } from './alert-run.js';
import { columnValues } from './alert-rows.js';
import { alertQueries, alertRuns, findAlert } from './alerts.js';
import { findCase } from './cases.js';
import { INTERACTIVE_THREADS } from '../sources/graph-share.js';
import type { QuerySlots } from '../sources/query-slots.js';
import { AlertParams, AlertRunSchema, CaseParams, MatchSchema, PreviewAnswer, PreviewBody, SourceKey } from './schemas.js';

export interface AlertRunRoutesOptions {
  run: RunDependencies;
  /** Where this process runs the schedule: told at once of a run asked for without waiting. */
  kick?: (() => void) | undefined;
  /** The interactive queries each user has running, shared with run/query. */
  slots: QuerySlots;
}

const DEFAULT_PREVIEW_LIMIT = 50;
const DEFAULT_PREVIEW_TIMEOUT_MS = 30_000;
/**
 * The most a preview's answer may hold (its JSON): rows of large values, up to 1,000 of them, were all held at once
 * (a row may hold up to 16 MB), and four previews a user at once could take the service's memory.
 */
export const MAX_PREVIEW_BYTES = 8 * 1024 * 1024;

export const alertRunRoutes: FastifyPluginAsyncTypebox<AlertRunRoutesOptions> = async (app, { run, kick, slots }) => {
  const { db, graphs, limits } = run;

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
      const principal = requireUser(request);
      const { sourceKey, alertId } = request.params;
      await findAlert(db, sourceKey, alertId);
      if ((await alertQueries(db, alertId)).length === 0) throw new AppError('invalid_alert_query', `alert ${alertId} has no queries to run: its matches are reported with POST …/matches`, undefined, 'queries');
      // Who asked for the run is audited with the ask (the claim, or the request left for the schedule); what the run
      // finds is the service's own work, in the run's history, not the audit log.
      const audited = { action: 'alert.run', targetType: 'alert', targetId: alertId, sourceKey } as const;
      if (request.body?.waitForRun) {
        const claimed = await db.transaction(async (tx) => {
          const claim = await claimAlert(tx, run.owner, alertId, limits);
          if (claim) await recordAudit(tx, principal, { ...audited, after: { waitForRun: true } });
          return claim;
        });
        if (!claimed) return { alreadyRunning: true };
        await runClaimedAlert(run, claimed);
        return { alreadyRunning: false };
      }
      const rows = await db.transaction(async (tx) => {
        const asked = await tx.query<{ running: boolean }>(
          `UPDATE alerts SET run_requested_at = COALESCE(run_requested_at, now()) WHERE id = $1
           RETURNING COALESCE(run_locked_until > now(), false) AS running`,
          [alertId],
        );
        if (asked.rows.length) await recordAudit(tx, principal, { ...audited, after: { waitForRun: false } });
        return asked.rows;
      });
      kick?.();
      return { alreadyRunning: rows[0]?.running ?? false };
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
      const { sourceKey, alertId } = request.params;
      await findAlert(db, sourceKey, alertId);
      return { items: await alertRuns(db, alertId, pageOf(request.query)) };
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
      return slots.hold(principal, request.params.sourceKey, async () => {
        const { graph } = await graphs.require(db, request.params.sourceKey);
        const stream = await graph
          .run(request.body.query, {
            readOnly: true,
            timeoutMs: Math.min(request.body.timeout ?? DEFAULT_PREVIEW_TIMEOUT_MS, limits.maxRuntimeMs),
            maxRows: request.body.limit ?? DEFAULT_PREVIEW_LIMIT,
            threads: INTERACTIVE_THREADS,
          })
          .catch((err: unknown) => {
            throw queryRefused(err, 'query');
          });
        const target = request.body.target;
        if (target && !stream.columns.includes(target)) {
          await stream.close();
          throw new AppError('invalid_alert_target', `target "${target}" is not returned by the query, which returns ${stream.columns.join(', ')}`, undefined, 'target');
        }
        const rows = [];
        let bytes = 0;
        for await (const row of stream) {
          const subgraph = new Subgraph();
          subgraph.addRow(row);
          const values = columnValues(row, columns);
          // Each row alone, as a query's answer: an edge is kept beside its two ends in the row.
          const { nodes, edges } = readableGraph(access, subgraph.toJSON());
          const entry = { nodes, edges, columns: columns.map((c) => values[c.columnName] as string | number | null) };
          bytes += Buffer.byteLength(JSON.stringify(entry));
          // Leaving the loop closes the stream: the engine reads no further.
          if (bytes > MAX_PREVIEW_BYTES) throw invalidParameter(`the preview's rows hold more than ${MAX_PREVIEW_BYTES / 1024 / 1024} MB (past row ${rows.length}): ask for fewer rows (limit) or return smaller values`, 'limit');
          rows.push(entry);
        }
        return rows;
      });
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
      const { sourceKey, alertId, caseId } = request.params;
      await findAlert(db, sourceKey, alertId);
      await findCase(db, alertId, caseId);
      const { offset, limit } = pageOf(request.query);
      const { rows } = await db.query<{ nodes: string[]; edges: string[]; columns: Record<string, unknown>; created_at: Date }>(
        'SELECT nodes, edges, columns, created_at FROM alert_matches WHERE case_id = $1 ORDER BY created_at DESC, hash OFFSET $2 LIMIT $3',
        [caseId, offset, limit],
      );
      return { items: rows.map((r) => ({ nodes: r.nodes, edges: r.edges, columns: r.columns, createdAt: r.created_at.toISOString() })) };
    },
  );
};
