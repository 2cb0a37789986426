import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, PositiveId } from '../http/schemas.js';
import { createApplication, deleteApplication, listApplications, MAX_APPLICATION_NAME_LENGTH, updateApplication } from './applications.js';
import type { MembershipLog } from './membership.js';
import { ApplicationSchema, GroupIds } from './schemas.js';

export interface ApplicationRoutesOptions {
  db: Database;
  /** Where which groups a key joins and leaves is recorded (the audit log; app.ts gives it). */
  membershipLog?: MembershipLog;
}

export const applicationRoutes: FastifyPluginAsyncTypebox<ApplicationRoutesOptions> = async (app, { db, membershipLog }) => {
  app.post(
    '/api/admin/applications',
    {
      schema: {
        operationId: 'createApplication',
        tags: ['applications'],
        summary: 'Create an API key; the key is in this answer only',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: MAX_APPLICATION_NAME_LENGTH }),
          groups: GroupIds,
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 201: ApplicationSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await createApplication(db, request.body, { actor: request.principal, membershipLog })),
  );

  app.get(
    '/api/admin/applications',
    {
      schema: {
        operationId: 'listApplications',
        tags: ['applications'],
        summary: 'List API keys (without the keys)',
        response: { 200: Type.Array(ApplicationSchema), ...errorResponses(401, 403) },
      },
    },
    async () => listApplications(db),
  );

  app.patch(
    '/api/admin/applications/:id',
    {
      schema: {
        operationId: 'updateApplication',
        tags: ['applications'],
        summary: "Rename, enable or disable an API key, or give it other groups (LKE's updateApplication); the key stays the same",
        params: Type.Object({ id: PositiveId }),
        body: Type.Object({
          name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_APPLICATION_NAME_LENGTH })),
          enabled: Type.Optional(Type.Boolean()),
          groups: Type.Optional(GroupIds),
        }),
        response: { 200: ApplicationSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => updateApplication(db, request.params.id, request.body, { actor: request.principal, membershipLog }),
  );

  app.delete(
    '/api/admin/applications/:id',
    {
      schema: {
        operationId: 'deleteApplication',
        tags: ['applications'],
        summary: 'Delete an API key',
        params: Type.Object({ id: PositiveId }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteApplication(db, request.params.id, { actor: request.principal, membershipLog });
      return noContent(reply);
    },
  );
};
