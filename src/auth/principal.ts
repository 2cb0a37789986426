import { ADMIN_GROUP_ID } from './groups.js';

/** Who a request acts as: a signed-in user, or a user through an API key (limited to the key's groups). */
export interface Principal {
  userId: number;
  username: string;
  email: string;
  groupIds: number[];
  via: 'session' | 'apiKey';
  /** Through an API key: the key's application, recorded with what the key does (case actions, /me, the logs). */
  application?: ApplicationRef;
}

export interface ApplicationRef {
  id: number;
  name: string;
}

/**
 * Puts who acts on every later log line of the request, the "request completed" one included: the user, and the
 * application when an API key acts for them. `setBindings` changes the request's own child logger, which the
 * reply logs through as well.
 */
export function bindPrincipalToLog(request: { principal: Principal | null; log: unknown }): void {
  const principal = request.principal;
  const log = request.log as { setBindings?: (bindings: Record<string, unknown>) => void };
  if (!principal || typeof log.setBindings !== 'function') return;
  log.setBindings(principal.application ? { userId: principal.userId, application: principal.application } : { userId: principal.userId });
}

export function isAdmin(principal: Principal | null): boolean {
  return principal !== null && principal.groupIds.includes(ADMIN_GROUP_ID);
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}
