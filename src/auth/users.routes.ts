import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses, PositiveId } from '../http/schemas.js';
import type { MembershipLog } from './membership.js';
import { GroupIdChanges, GroupIds, UserSchema } from './schemas.js';
import * as users from './users.service.js';
import { MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH, MAX_USERNAME_LENGTH, MIN_EMAIL_LENGTH } from './users.service.js';

export interface UserRoutesOptions {
  db: Database;
  initialPasswordFile?: string;
  /** Where who joins and leaves which group is recorded (the audit log; app.ts gives it). */
  membershipLog?: MembershipLog;
}

export const userRoutes: FastifyPluginAsyncTypebox<UserRoutesOptions> = async (app, { db, initialPasswordFile, membershipLog }) => {
  app.post(
    '/api/admin/users',
    {
      schema: {
        operationId: 'createUser',
        tags: ['users'],
        summary: 'Create a user (default group: Analyst)',
        body: Type.Object({
          username: Type.String({ minLength: 1, maxLength: MAX_USERNAME_LENGTH }),
          email: Type.String({ minLength: MIN_EMAIL_LENGTH, maxLength: MAX_EMAIL_LENGTH }),
          password: Type.String({ maxLength: MAX_PASSWORD_LENGTH }),
          groups: Type.Optional(GroupIds),
        }),
        response: { 201: UserSchema, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await users.createUser(db, request.body, { actor: request.principal, membershipLog })),
  );

  app.get(
    '/api/admin/users',
    { schema: { operationId: 'listUsers', tags: ['users'], summary: 'List users', response: { 200: Type.Object({ items: Type.Array(UserSchema) }), ...errorResponses(401, 403) } } },
    async () => ({ items: await users.listUsers(db) }),
  );

  app.patch(
    '/api/admin/users/:id',
    {
      schema: {
        operationId: 'updateUser',
        tags: ['users'],
        summary: "Change a user; its groups as a whole (`groups`) or LKE's `addedGroups` and `removedGroups`",
        params: Type.Object({ id: PositiveId }),
        body: Type.Object({
          username: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_USERNAME_LENGTH })),
          email: Type.Optional(Type.String({ minLength: MIN_EMAIL_LENGTH, maxLength: MAX_EMAIL_LENGTH })),
          password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD_LENGTH })),
          groups: Type.Optional(GroupIds),
          addedGroups: Type.Optional(GroupIdChanges),
          removedGroups: Type.Optional(GroupIdChanges),
        }),
        response: { 200: UserSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => users.updateUser(db, request.params.id, request.body, { initialPasswordFile, actor: request.principal, membershipLog }),
  );

  app.delete(
    '/api/admin/users/:id',
    {
      schema: {
        operationId: 'deleteUser',
        tags: ['users'],
        summary: 'Delete a user',
        params: Type.Object({ id: PositiveId }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await users.deleteUser(db, request.params.id, { actor: request.principal, membershipLog });
      return noContent(reply);
    },
  );
};
