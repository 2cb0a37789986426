import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';

const HEALTH_TIMEOUT_MS = 3000;

export async function healthRoutes(app: FastifyInstance, { db }: { db: Database }): Promise<void> {
  app.get(
    '/health',
    {
      schema: {
        tags: ['operations'],
        summary: '200 when the database answers, 503 when it does not',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Type.Object({ status: Type.Literal('unavailable'), message: Type.String() }) },
      },
    },
    async (_request, reply) => {
      try {
        // A database that hangs is as down as one that refuses: answer within HEALTH_TIMEOUT_MS either way.
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), HEALTH_TIMEOUT_MS);
        });
        await Promise.race([db.query('SELECT 1'), timeout]).finally(() => clearTimeout(timer));
        return { status: 'ok' as const };
      } catch {
        return reply.status(503).send({ status: 'unavailable' as const, message: 'the database does not answer' });
      }
    },
  );
}
