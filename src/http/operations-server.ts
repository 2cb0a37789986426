import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from '../logger.js';
import { healthRoutes, type HealthOptions } from './health.routes.js';

/**
 * What a process that serves no API (ROLE=worker) answers on METRICS_PORT, for its orchestrator and monitoring:
 * `/health`, `/health/live` and `/health/ready`, the same routes as on the API port, and nothing else (no API, no
 * console, no sign-in). The Prometheus metrics will be served here too (issue 12, item 1).
 */
export async function startOperationsServer(options: HealthOptions & { logger: Logger; host: string; port: number }): Promise<{ address: string; app: FastifyInstance }> {
  const app = Fastify({ loggerInstance: options.logger as FastifyBaseLogger });
  await app.register(healthRoutes, { db: options.db, schedules: options.schedules });
  const address = await app.listen({ port: options.port, host: options.host });
  return { address, app };
}
