import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { errorResponses, MAX_INT4, PositiveId, UserSchema } from '../http/schemas.js';
import * as users from './users.service.js';

const GroupIds = Type.Array(Type.Integer({ minimum: 1, maximum: MAX_INT4 }), { minItems: 1, maxItems: 10 });

export async function userRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.post(
    '/api/admin/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        summary: 'Create a user (default group: Analyst)',
        body: Type.Object({
          username: Type.String({ minLength: 1, maxLength: 100 }),
          email: Type.String({ minLength: 3, maxLength: 254 }),
          password: Type.String({ maxLength: 1024 }),
          groups: Type.Optional(GroupIds),
        }),
        response: { 201: UserSchema, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await users.createUser(db, request.body as users.NewUser)),
  );

  app.get(
    '/api/admin/users',
    { config: { access: 'admin' }, schema: { tags: ['users'], summary: 'List users', response: { 200: Type.Object({ items: Type.Array(UserSchema) }), ...errorResponses(401, 403) } } },
    async () => ({ items: await users.listUsers(db) }),
  );

  app.patch(
    '/api/admin/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        summary: 'Change a user',
        params: Type.Object({ id: PositiveId }),
        body: Type.Object({
          username: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          email: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
          groups: Type.Optional(GroupIds),
        }),
        response: { 200: UserSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => users.updateUser(db, (request.params as { id: number }).id, request.body as users.UserChanges),
  );

  app.delete(
    '/api/admin/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        summary: 'Delete a user',
        params: Type.Object({ id: PositiveId }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await users.deleteUser(db, (request.params as { id: number }).id);
      return reply.status(204).send();
    },
  );
}
