import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { errorResponses, UserSchema } from '../http/schemas.js';
import { requireUser } from './authenticate.js';
import { groupsOf } from './groups.js';
import { LoginThrottle } from './login-throttle.js';
import { decoyPasswordHash, verifyPassword } from './passwords.js';
import { createSession, deleteSession, SESSION_COOKIE } from './sessions.js';
import { findUserById, findUserByLogin } from './users.repo.js';
import { toUser } from './users.service.js';

export interface AuthRoutesOptions {
  db: Database;
  sessionTtlMs: number;
  secureCookie: boolean;
}

export async function authRoutes(app: FastifyInstance, { db, sessionTtlMs, secureCookie }: AuthRoutesOptions): Promise<void> {
  const throttle = new LoginThrottle();

  app.post(
    '/api/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign in with a username or email and a password; answers the user and sets the session cookie',
        body: Type.Object({ usernameOrEmail: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ maxLength: 1024 }) }),
        response: { 200: UserSchema, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const { usernameOrEmail, password } = request.body as { usernameOrEmail: string; password: string };
      const waitSeconds = throttle.retryAfterSeconds(request.ip);
      if (waitSeconds > 0) {
        reply.header('retry-after', String(waitSeconds));
        throw new AppError('too_many_requests', `too many failed sign-ins from ${request.ip}: try again in ${waitSeconds} s`);
      }
      const user = await findUserByLogin(db, usernameOrEmail);
      // Verify against a decoy when the user is unknown, so both failures take as long and read the same.
      const valid = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()));
      if (!user || !valid) {
        throttle.recordFailure(request.ip);
        throw new AppError('unauthorized', 'wrong username, email or password');
      }
      throttle.recordSuccess(request.ip);
      const token = await createSession(db, user.id, sessionTtlMs);
      reply.setCookie(SESSION_COOKIE, token, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: secureCookie,
        maxAge: Math.floor(sessionTtlMs / 1000),
      });
      return toUser(user);
    },
  );

  app.get(
    '/api/auth/me',
    { schema: { tags: ['auth'], summary: 'The signed-in user', response: { 200: UserSchema, ...errorResponses(401) } } },
    async (request) => {
      const principal = requireUser(request);
      const user = await findUserById(db, principal.userId);
      if (!user) throw new AppError('unauthorized', 'the session belongs to a user that no longer exists');
      // Through an API key the user acts with the key's groups only: show those.
      return { ...toUser(user), groups: groupsOf(principal.groupIds) };
    },
  );

  app.get(
    '/api/auth/logout',
    { schema: { tags: ['auth'], summary: 'End the session', response: { 204: Type.Null() } } },
    async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE];
      if (token) await deleteSession(db, token);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return reply.status(204).send();
    },
  );
}
