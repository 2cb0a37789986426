import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { refuseLargeAnonymousBody } from '../http/validation.js';
import { findApiKeyApplication } from './applications.js';
import { refuseCrossOriginSession } from './same-origin.js';
import { bindPrincipalToLog, isAdmin, type Principal } from './principal.js';
import { findSessionUser, SESSION_COOKIE } from './sessions.js';
import { findUserByEmail } from './users.repo.js';

/**
 * Who may call a route: anyone (`public`), any signed-in user or API key (`user`), or the Admin group (`admin`).
 * Every route declares one in its options, `config: { access }`; the guard reads it from the route the router
 * matched, never from the URL text, which the router decodes (`/api/%61dmin/users` is `/api/admin/users`).
 */
export const ROUTE_ACCESS = ['public', 'user', 'admin'] as const;
export type RouteAccess = (typeof ROUTE_ACCESS)[number];

/** A registered route and who may call it, as `onRoute` saw it (hidden routes and HEAD twins included). */
export interface DeclaredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /**
     * A public route that never asks who calls (health checks, static files): no session or key is looked up, so
     * it answers whatever the session store's state (a cookie sent to /health with the database away is no 500).
     */
    sessionless?: boolean;
    /**
     * A GET that changes something (the official client's logout): a session cookie on it is held to the same-origin
     * rule of the other methods (same-origin.ts).
     */
    changesState?: boolean;
  }
  interface FastifyInstance {
    /** Every route registered so far, with its declared access. */
    readonly declaredRoutes: readonly DeclaredRoute[];
  }
}

const PLUGIN_ACCESS = Symbol('access of every route of this plugin');

/**
 * Registers `plugin` with `access` declared for each of its routes that declares none itself: for a module whose
 * routes all share one access. The declaration is still explicit, at the registration.
 */
export function withAccess<Options extends object>(access: RouteAccess, plugin: FastifyPluginAsync<Options>): FastifyPluginAsync<Options> {
  return async (instance, options) => {
    // `instance` is this plugin's own encapsulated context: the mark is seen by its routes alone.
    (instance as unknown as Record<symbol, RouteAccess>)[PLUGIN_ACCESS] = access;
    await plugin(instance, options);
  };
}

/** The rule of docs/api.md (Conventions): every path under /api/admin/ needs the Admin group. */
export function isAdminPath(path: string): boolean {
  return path === '/api/admin' || path.startsWith('/api/admin/');
}

/**
 * Resolves who each request acts as, from the session cookie or `Authorization: Basic base64(email:apiKey)`,
 * and enforces the matched route's declared access: no principal → 401, not Admin → 403 (docs/api.md, Sign-in, users and API keys).
 * Call it before any route is registered: its `onRoute` hook refuses, at start, a route that declares no access
 * or an /api/admin/ route that is not `admin`, so an unguarded route cannot be shipped by forgetting.
 */
export function registerAuthentication(app: FastifyInstance, db: Database, options: { publicBaseUrl: string }): void {
  const publicOrigin = new URL(options.publicBaseUrl).origin;
  const declared: DeclaredRoute[] = [];
  app.decorate('declaredRoutes', declared);
  app.decorateRequest('principal', null);

  app.addHook('onRoute', function (route) {
    const methods = ([] as string[]).concat(route.method);
    const where = `${methods.join(',')} ${route.url}`;
    const access = route.config?.access ?? (this as unknown as Record<symbol, RouteAccess | undefined>)[PLUGIN_ACCESS];
    if (access === undefined || !ROUTE_ACCESS.includes(access)) {
      throw new Error(`route ${where} declares no access: give it config: { access: 'public' | 'user' | 'admin' }`);
    }
    if (isAdminPath(route.url) && access !== 'admin') {
      throw new Error(`route ${where} is under /api/admin/ but declares access '${access}': every /api/admin/ route needs 'admin'`);
    }
    route.config = { ...route.config, access };
    for (const method of methods) declared.push({ method, url: route.url, access });
  });

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.sessionless && request.routeOptions.config.access === 'public') return;
    request.principal = await resolvePrincipal(db, request);
    refuseCrossOriginSession(request, publicOrigin);
    bindPrincipalToLog(request);
    // No declared access means no route matched (the not-found handler): its answer depends on the path alone.
    const access = request.routeOptions.config.access;
    // Besides the route's own word, the rule on the decoded path: a parametric route such as
    // /api/:sourceKey/alerts must not serve /api/admin/alerts to a non-Admin, nor may an unknown /api/admin/
    // path tell an anonymous caller whether it exists.
    if (access === 'admin' || isAdminPath(decodedPath(request))) requireAdmin(request);
    else if (access === 'user') requireUser(request);
    // Who may send a large body is known now, before it is read (src/http/validation.ts).
    refuseLargeAnonymousBody(request);
  });
}

/**
 * The request's path as the router reads it: without an absolute-form `http://host` prefix (which the router
 * strips) or the query, percent-decoded. A path that does not decode is left as it is (the router refuses it).
 */
export function decodedPath(request: FastifyRequest): string {
  const raw = request.raw.url ?? request.url;
  const path = raw.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split('?')[0]!;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** What the request is refused for, in messages: the matched route's pattern, or the decoded path. */
function routeName(request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.config.access ? request.routeOptions.url : decodedPath(request)}`;
}

async function resolvePrincipal(db: Database, request: FastifyRequest): Promise<Principal | null> {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Basic ')) return principalFromApiKey(db, authorization.slice(6));
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  const user = await findSessionUser(db, token);
  return user ? { userId: user.id, username: user.username, email: user.email, groupIds: user.group_ids, via: 'session' } : null;
}

async function principalFromApiKey(db: Database, encoded: string): Promise<Principal | null> {
  const decoded = Buffer.from(encoded.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new AppError('unauthorized', 'the Authorization header must be Basic base64(<user email>:<API key>)');
  const email = decoded.slice(0, colon);
  const apiKey = decoded.slice(colon + 1);
  // PostgreSQL text cannot hold U+0000: such an email is no user's, and asking the database would fail.
  const application = email.includes('\u0000') ? undefined : await findApiKeyApplication(db, apiKey);
  const user = application ? await findUserByEmail(db, email) : undefined;
  // One answer for an unknown key, a disabled one and an unknown email: nothing to learn by probing.
  if (!application || !user) throw new AppError('unauthorized', 'the API key or the email in the Authorization header is not valid');
  // The key acts as the user, limited to the groups both have.
  const groupIds = user.group_ids.filter((id) => application.groupIds.includes(id));
  const { id, name } = application;
  return { userId: user.id, username: user.username, email: user.email, groupIds, via: 'apiKey', application: { id, name } };
}

export function requireUser(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'sign in first (POST /api/auth/login) or send an API key');
  return request.principal;
}

export function requireAdmin(request: FastifyRequest): Principal {
  const principal = requireUser(request);
  if (!isAdmin(principal)) throw new AppError('forbidden', `${routeName(request)} needs the Admin group`);
  return principal;
}
