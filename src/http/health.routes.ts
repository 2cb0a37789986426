import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';

// A database that hangs is as down as one that refuses: /health answers within about this long either way.
const HEALTH_TIMEOUT_MS = 3000;

/**
 * `/health` says whether this process can reach its database, for a load balancer or an orchestrator:
 * - 200 `{status: 'ok'}`: the database answered `SELECT 1` within HEALTH_TIMEOUT_MS (PostgreSQL: on a connection
 *   of its own, so a pool taken up by long transactions does not delay it); or, on the embedded database, which
 *   runs one statement at a time, the check is waiting its turn behind work the database is making progress on
 *   (a large call): busy is not down, and an orchestrator must not restart a process for it.
 * - 503 `{status: 'unavailable'}`: the database refuses or does not answer (PostgreSQL away, the embedded
 *   database's thread stopped, or stuck on one statement for minutes). The process stays up and retries; /health
 *   answers 200 again by itself once the database is back.
 */
export async function healthRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  // Logged when the answer changes, not on every probe of an outage.
  let wasOk = true;
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['operations'],
        summary: '200 when the database answers (or is busy working), 503 when it does not',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Type.Object({ status: Type.Literal('unavailable'), message: Type.String() }) },
      },
    },
    async (request, reply) => {
      const health = await db.health(HEALTH_TIMEOUT_MS);
      if (health.ok) {
        if (!wasOk) request.log.info('health check: the database answers again');
        wasOk = true;
        return { status: 'ok' as const };
      }
      // The reason is for the operator's log, not the answer (it may name hosts).
      if (wasOk) request.log.warn({ reason: health.reason }, 'health check: the database does not answer');
      wasOk = false;
      return reply.status(503).send({ status: 'unavailable' as const, message: 'the database does not answer' });
    },
  );
}
