import { ADMIN_GROUP_ID } from './groups.js';

/** Who a request acts as: a signed-in user, or a user through an API key (limited to the key's groups). */
export interface Principal {
  userId: number;
  username: string;
  email: string;
  groupIds: number[];
  via: 'session' | 'apiKey';
}

export function isAdmin(principal: Principal | null): boolean {
  return principal !== null && principal.groupIds.includes(ADMIN_GROUP_ID);
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}
