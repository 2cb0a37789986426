import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { findApiKeyGroups } from './applications.js';
import { isAdmin, type Principal } from './principal.js';
import { findSessionUserId, SESSION_COOKIE } from './sessions.js';
import { findUserByEmail, findUserById } from './users.repo.js';

/**
 * Resolves who each request acts as, from the session cookie or `Authorization: Basic base64(email:apiKey)`,
 * and guards every `/api/admin/` path: no principal → 401, not Admin → 403 (contract §1).
 */
export function registerAuthentication(app: FastifyInstance, db: Database): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    request.principal = await resolvePrincipal(db, request);
    if (request.url.startsWith('/api/admin/') || request.url === '/api/admin') requireAdmin(request);
  });
}

async function resolvePrincipal(db: Database, request: FastifyRequest): Promise<Principal | null> {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Basic ')) return principalFromApiKey(db, authorization.slice(6));
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  const userId = await findSessionUserId(db, token);
  if (userId === undefined) return null;
  const user = await findUserById(db, userId);
  return user ? { userId: user.id, username: user.username, email: user.email, groupIds: user.group_ids, via: 'session' } : null;
}

async function principalFromApiKey(db: Database, encoded: string): Promise<Principal | null> {
  const decoded = Buffer.from(encoded.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new AppError('unauthorized', 'the Authorization header must be Basic base64(<user email>:<API key>)');
  const email = decoded.slice(0, colon);
  const apiKey = decoded.slice(colon + 1);
  const keyGroups = await findApiKeyGroups(db, apiKey);
  const user = keyGroups ? await findUserByEmail(db, email) : undefined;
  // One answer for an unknown key, a disabled one and an unknown email: nothing to learn by probing.
  if (!keyGroups || !user) throw new AppError('unauthorized', 'the API key or the email in the Authorization header is not valid');
  // The key acts as the user, limited to the groups both have.
  const groupIds = user.group_ids.filter((id) => keyGroups.includes(id));
  return { userId: user.id, username: user.username, email: user.email, groupIds, via: 'apiKey' };
}

export function requireUser(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'sign in first (POST /api/auth/login) or send an API key');
  return request.principal;
}

export function requireAdmin(request: FastifyRequest): Principal {
  const principal = requireUser(request);
  if (!isAdmin(principal)) throw new AppError('forbidden', `${request.method} ${request.url.split('?')[0]} needs the Admin group`);
  return principal;
}
