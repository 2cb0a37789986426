import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { errorResponses, GroupSchema, MAX_INT4, PositiveId, Timestamp } from '../http/schemas.js';
import { createApplication, deleteApplication, listApplications } from './applications.js';

const ApplicationSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  apiKey: Type.Optional(Type.String({ description: 'shown in the creation answer only' })),
  enabled: Type.Boolean(),
  groups: Type.Array(GroupSchema),
  rights: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export async function applicationRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.post(
    '/api/admin/applications',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['applications'],
        summary: 'Create an API key; the key is in this answer only',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          groups: Type.Array(Type.Integer({ minimum: 1, maximum: MAX_INT4 }), { minItems: 1, maxItems: 10 }),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 201: ApplicationSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await createApplication(db, request.body as Parameters<typeof createApplication>[1])),
  );

  app.get(
    '/api/admin/applications',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['applications'],
        summary: 'List API keys (without the keys)',
        response: { 200: Type.Array(ApplicationSchema), ...errorResponses(401, 403) },
      },
    },
    async () => listApplications(db),
  );

  app.delete(
    '/api/admin/applications/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['applications'],
        summary: 'Delete an API key',
        params: Type.Object({ id: PositiveId }),
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteApplication(db, (request.params as { id: number }).id);
      return reply.status(204).send();
    },
  );
}
