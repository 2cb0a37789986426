import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { visibleSourceKeys } from '../access/source-access.js';
import { requireUser } from '../auth/authenticate.js';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses } from '../http/schemas.js';
import type { GraphRegistry } from './graph-registry.js';
import { CreateDataSourceBody, DataSourceSchema, DataSourceSummarySchema, SourceKey, UpdateDataSourceBody } from './schemas.js';
import { createDataSource, deleteDataSource, findDataSource, listDataSources, updateDataSource, type SourceGraphs } from './sources.js';

export interface SourceRoutesOptions extends SourceGraphs {
  db: Database;
  graphs: GraphRegistry;
}

const KeyParams = Type.Object({ sourceKey: SourceKey });

/** The Admin's management of data sources and their graphs, all under /api/admin/ (registered with `admin` access). */
export const sourceRoutes: FastifyPluginAsyncTypebox<SourceRoutesOptions> = async (app, { db, keyring, graphs }) => {
  const deps = { keyring, graphs };

  app.post(
    '/api/admin/sources',
    {
      schema: {
        operationId: 'createDataSource',
        tags: ['data sources'],
        summary: 'Register a data source, with its graph (ext); the graph is reached before anything is stored',
        body: CreateDataSourceBody,
        response: { 201: DataSourceSchema, ...errorResponses(400, 401, 403, 409, 503) },
      },
    },
    async (request, reply) => reply.status(201).send(await createDataSource(db, request.body, deps)),
  );

  app.get(
    '/api/admin/sources',
    {
      schema: { operationId: 'listDataSourcesAdmin', tags: ['data sources'], summary: 'Data sources with their graph settings (ext)', response: { 200: Type.Object({ items: Type.Array(DataSourceSchema) }), ...errorResponses(401, 403) } },
    },
    async () => ({ items: await listDataSources(db) }),
  );

  app.get(
    '/api/admin/sources/:sourceKey',
    {
      schema: { operationId: 'getDataSource', tags: ['data sources'], summary: 'One data source (ext)', params: KeyParams, response: { 200: DataSourceSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => findDataSource(db, request.params.sourceKey),
  );

  app.patch(
    '/api/admin/sources/:sourceKey',
    {
      schema: {
        operationId: 'updateDataSource',
        tags: ['data sources'],
        summary: 'Rename a data source or change its graph (ext); `graph: null` removes the graph',
        params: KeyParams,
        body: UpdateDataSourceBody,
        response: { 200: DataSourceSchema, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => updateDataSource(db, request.params.sourceKey, request.body, deps),
  );

  app.delete(
    '/api/admin/sources/:sourceKey',
    {
      schema: {
        operationId: 'deleteDataSource',
        tags: ['data sources'],
        summary: 'Delete a data source, its alerts and their cases (ext); an embedded graph\'s files are kept',
        params: KeyParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteDataSource(db, request.params.sourceKey, deps);
      return noContent(reply);
    },
  );

};

/** The sources the signed-in user's groups are on (LKE's `/api/dataSources`), registered with `user` access. */
export const dataSourceListRoutes: FastifyPluginAsyncTypebox<{ db: Database; graphs: GraphRegistry }> = async (app, { db, graphs }) => {
  app.get(
    '/api/dataSources',
    {
      schema: {
        operationId: 'listDataSources',
        tags: ['data sources'],
        summary: 'List data sources',
        response: { 200: Type.Array(DataSourceSummarySchema), ...errorResponses(401) },
      },
    },
    async (request) => {
      const visible = await visibleSourceKeys(db, requireUser(request));
      // `connected`: whether this process has the source's graph open and answering, as far as it knows without
      // asking every graph on each call; a source without a graph is always connected.
      const open = new Set(graphs.opened().map((g) => g.sourceKey));
      return (await listDataSources(db)).filter(({ key }) => visible === 'all' || visible.has(key)).map(({ key, name, graph }) => ({ key, name, connected: !graph || open.has(key) || graphs.reachable(key) }));
    },
  );
};
