import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError, notFound } from '../errors.js';
import type { Action } from './access-rights.js';
import { loadSourceAccess, type SourceAccess } from './source-access.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's access to the route's `:sourceKey`, resolved before the handler (registerSourceAccess). */
    sourceAccess: SourceAccess | null;
  }
}

/** What a source the caller may not see answers: exactly what a source that does not exist answers. */
export const unknownSource = (sourceKey: string) => new AppError('dataSource_unavailable', `no data source has the key "${sourceKey}"`);

/**
 * Resolves, on every `user` route of the matched route table with a `:sourceKey` parameter, the caller's access to
 * that source, after the parameters are validated and before the handler: a source none of the caller's groups is on
 * answers as one that does not exist, and so does, with `:alertId`, an alert they may not read (404). The decision is
 * the matched route's (its declared access and parsed parameters), never the URL text. Routes under /api/admin/ are
 * the Admin's, who sees everything.
 */
export function registerSourceAccess(app: FastifyInstance, db: Database): void {
  app.decorateRequest('sourceAccess', null);
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.access !== 'user' || !request.principal) return;
    const params = request.params as { sourceKey?: unknown; alertId?: unknown } | undefined;
    if (typeof params?.sourceKey !== 'string') return;
    const access = await loadSourceAccess(db, request.principal, params.sourceKey);
    if (!access) throw unknownSource(params.sourceKey);
    if (typeof params.alertId === 'number' && !access.readsAlert(params.alertId)) throw notFound('alert', params.alertId);
    request.sourceAccess = access;
  });
}

/** The access the hook resolved for this request's source. A route that asks without a `:sourceKey` is a bug. */
export function sourceAccessOf(request: FastifyRequest): SourceAccess {
  if (!request.sourceAccess) throw new Error(`${request.method} ${request.routeOptions.url}: no source access was resolved (no :sourceKey, or not a user route)`);
  return request.sourceAccess;
}

/** Refuses, 403, an action the caller's groups do not grant on the source. */
export function requireAction(request: FastifyRequest, action: Action, what: string): SourceAccess {
  const access = sourceAccessOf(request);
  if (!access.may(action)) throw new AppError('forbidden', `${what} needs the "${action}" right on data source "${access.sourceKey}"`);
  return access;
}
