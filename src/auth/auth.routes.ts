import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { noContent } from '../http/no-content.js';
import { errorResponses } from '../http/schemas.js';
import { requireUser } from './authenticate.js';
import { addressKey } from '../http/client-address.js';
import { LoginThrottle } from './login-throttle.js';
import { decoyPasswordHash, verifyPassword } from './passwords.js';
import { UserSchema } from './schemas.js';
import { createSession, deleteSession, SESSION_COOKIE } from './sessions.js';
import { findUserById, findUserByLogin } from './users.repo.js';
import { MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH, MAX_USERNAME_LENGTH, toUser } from './users.service.js';

/** Sign-in takes a username or an email: the longer of the two. */
const MAX_LOGIN_LENGTH = Math.max(MAX_USERNAME_LENGTH, MAX_EMAIL_LENGTH);

const SourceAccessRightsSchema = Type.Object({
  alerts: Type.Object({ read: Type.Array(Type.String()) }),
  nodes: Type.Object({ edit: Type.Array(Type.String()), write: Type.Array(Type.String()) }),
  edges: Type.Object({ edit: Type.Array(Type.String()), write: Type.Array(Type.String()) }),
});

const MeSchema = Type.Object({
  ...UserSchema.properties,
  application: Type.Optional(Type.Object({ id: Type.Integer(), name: Type.String() })),
  actions: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), { description: "LKE's User.actions: the actions the user may do, by data source key (`*`: every source)" })),
  accessRights: Type.Optional(
    Type.Record(Type.String(), SourceAccessRightsSchema, { description: "LKE's User.accessRights: the alerts read and the categories and types edited or written, by data source key (`*`: every source)" }),
  ),
});

/** LKE's `actions` and `accessRights` of a user in these groups (access/user-access.ts; app.ts gives it: auth cannot import access). */
export type DescribeAccess = (db: Database, groupIds: readonly number[]) => Promise<{ actions: Record<string, string[]>; accessRights: Record<string, Static<typeof SourceAccessRightsSchema>> }>;

/** What sign-in needs of the process configuration (env.ts), stated here so auth does not import it. */
export interface SignInConfig {
  readonly sessionTtlMs: number;
  /** Fastify's `trustProxy`: `true`, or a hop count (a function), trusts forwarded headers from any peer. */
  readonly trustProxy: boolean | readonly string[] | ((address: string, hop: number) => boolean);
  readonly loginFailuresPerAddress: number;
}

export interface AuthRoutesOptions {
  db: Database;
  config: SignInConfig;
  /** Adds LKE's `actions` and `accessRights` to `GET /api/auth/me`. */
  describeAccess?: DescribeAccess;
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, { db, config, describeAccess }) => {
  const { sessionTtlMs } = config;
  const throttle = new LoginThrottle({ addressMaxFailures: config.loginFailuresPerAddress });
  if (config.trustProxy === true || typeof config.trustProxy === 'function') {
    app.log.warn(
      'TRUST_PROXY trusts X-Forwarded-For and X-Forwarded-Proto from peers it does not check: run the service reachable only through its proxies, ' +
        'or any client can choose the address sign-ins are counted under; list the proxies\' addresses instead where you can',
    );
  }

  app.post(
    '/api/auth/login',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Sign in with a username or email and a password; answers the user and sets the session cookie',
        body: Type.Object({ usernameOrEmail: Type.String({ minLength: 1, maxLength: MAX_LOGIN_LENGTH }), password: Type.String({ maxLength: MAX_PASSWORD_LENGTH }) }),
        response: { 200: UserSchema, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const { usernameOrEmail, password } = request.body;
      // Counted before the password check, and synchronously: see the policy in login-throttle.ts.
      const byAddress = throttle.admitAddress(addressKey(request.ip));
      if (!byAddress.allowed) {
        reply.header('retry-after', String(byAddress.retryAfterSeconds));
        throw new AppError('too_many_requests', `too many failed sign-ins from ${request.ip}: try again in ${byAddress.retryAfterSeconds} s`);
      }
      let outcome: 'failure' | 'success' | 'none' = 'none';
      try {
        const user = await findUserByLogin(db, usernameOrEmail);
        const byAccount = throttle.admitAccount(user ? `user:${user.id}` : `login:${usernameOrEmail.toLowerCase()}`);
        if (!byAccount.allowed) {
          reply.header('retry-after', String(byAccount.retryAfterSeconds));
          throw new AppError(
            'too_many_requests',
            `too many failed sign-ins to this account: try again in ${byAccount.retryAfterSeconds} s (the wait grows with each failure, up to ${throttle.policy.accountMaxDelayMs / 1000} s)`,
          );
        }
        try {
          // Verify against a decoy when the user is unknown, so both failures take as long and read the same.
          const valid = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()));
          outcome = user && valid ? 'success' : 'failure';
        } finally {
          byAccount.reservation.settle(outcome);
        }
        if (!user || outcome !== 'success') throw new AppError('unauthorized', 'wrong username, email or password');
        const token = await createSession(db, user.id, sessionTtlMs);
        reply.setCookie(SESSION_COOKIE, token, {
          path: '/',
          httpOnly: true,
          sameSite: 'lax',
          // Secure when this request came over https, directly or through a proxy TRUST_PROXY names (X-Forwarded-Proto):
          // a client on plain http drops a Secure cookie, signs in, and is refused on every later call.
          secure: request.protocol === 'https',
          maxAge: Math.floor(sessionTtlMs / 1000),
        });
        return toUser(user);
      } finally {
        byAddress.reservation.settle(outcome);
      }
    },
  );

  app.get(
    '/api/auth/me',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'getCurrentUser',
        tags: ['auth'],
        summary: "The signed-in user with LKE's actions and accessRights by data source; through an API key, also the key's application (the key acts for the user)",
        response: { 200: MeSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      const principal = requireUser(request);
      const user = await findUserById(db, principal.userId);
      if (!user) throw new AppError('unauthorized', 'the session belongs to a user that no longer exists');
      // Through an API key the user acts with the key's groups only, on behalf of its application: show both.
      const answer = toUser(user);
      const me = { ...answer, groups: answer.groups.filter((group) => principal.groupIds.includes(group.id)), ...(await describeAccess?.(db, principal.groupIds)) };
      return principal.application ? { ...me, application: principal.application } : me;
    },
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await deleteSession(db, token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return noContent(reply);
  };
  const logoutSchema = { tags: ['auth'], response: { 204: Type.Null(), ...errorResponses(403) } };
  app.post('/api/auth/logout', { config: { access: 'public' }, schema: { ...logoutSchema, operationId: 'logout', summary: 'End the session' } }, logout);
  // LKE's client (`auth.logout()`) and the contract end a session with a GET. A link or an image on another page
  // must not: with a session cookie, the GET is held to the same-origin rule of a POST (same-origin.ts).
  app.get(
    '/api/auth/logout',
    {
      exposeHeadRoute: false,
      config: { access: 'public', changesState: true },
      schema: { ...logoutSchema, operationId: 'logoutGet', summary: "End the session, as LKE's client asks it (refused from another origin's page)" },
    },
    logout,
  );
};
