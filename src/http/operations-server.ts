import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from '../logger.js';
import { limitConnectionsPerAddress, requestDeadlineOptions, type ConnectionLimits } from './connection-limits.js';
import { healthRoutes, type HealthOptions } from './health.routes.js';

/**
 * What a process that serves no API (ROLE=worker) answers on METRICS_PORT, for its orchestrator and monitoring:
 * `/health`, `/health/live` and `/health/ready`, the same routes as on the API port, and nothing else (no API, no
 * console, no sign-in), and `/metrics` from the `metrics` plugin the caller gives (src/metrics/metrics.routes.ts:
 * given rather than imported, as this folder imports only the base).
 */
export async function startOperationsServer(
  options: HealthOptions & { logger: Logger; host: string; port: number; metrics?: FastifyPluginAsync; limits: ConnectionLimits },
): Promise<{ address: string; app: FastifyInstance }> {
  // The same deadline and per-address cap as the API port: a slow client must not hold the probes' port either.
  const app = Fastify({ loggerInstance: options.logger as FastifyBaseLogger, ...requestDeadlineOptions(options.limits) });
  limitConnectionsPerAddress(app.server, options.limits.maxConnectionsPerAddress);
  await app.register(healthRoutes, { db: options.db, schedules: options.schedules });
  if (options.metrics) await app.register(options.metrics);
  const address = await app.listen({ port: options.port, host: options.host });
  return { address, app };
}
