import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAdmin } from '../auth/principal.js';
import type { ErrorKey } from '../errors.js';
import { PROBE_LOG_LEVEL } from '../http/health.routes.js';
import type { Metrics } from './metrics.js';

export interface MetricsRouteOptions {
  metrics: Metrics;
  /** METRICS_TOKEN: a scraper off this host sends `Authorization: Bearer <token>`. */
  token?: string | undefined;
}

interface ErrorBody {
  key: ErrorKey;
  message: string;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * `GET /metrics`, the Prometheus text exposition. Declared public, so the access guard lets it through without
 * a principal; the handler decides: a peer on this host (loopback), an Admin (session or API key, where this
 * listener authenticates: the API port), or the METRICS_TOKEN bearer. Backlog and failure counts per webhook tell
 * an outsider too much to be open beyond the host.
 */
export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const token = options.token ? digest(options.token) : undefined;
  const schema = {
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description: 'The text exposition of this process\'s metrics (docs/operations.md). Open on loopback; otherwise an Admin session or API key, or Authorization: Bearer <METRICS_TOKEN>; else 401.',
    response: {
      200: { description: 'the Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
      401: { description: 'not on loopback, and neither an Admin nor the METRICS_TOKEN bearer', type: 'object', properties: { key: { type: 'string' }, message: { type: 'string' } }, required: ['key', 'message'] },
    },
  };
  app.get('/metrics', { schema, config: { access: 'public' }, logLevel: PROBE_LOG_LEVEL }, async (request, reply) => {
    if (!mayScrape(request, token)) {
      // Answered here rather than thrown: the worker's listener has no error handler to shape an AppError.
      const error: ErrorBody = { key: 'unauthorized', message: 'metrics are open on loopback only: sign in as an Admin, send an Admin API key, or send Authorization: Bearer <METRICS_TOKEN>' };
      return reply.code(401).send(error);
    }
    const { contentType, body } = await options.metrics.render();
    return reply.type(contentType).send(body);
  });
}

function mayScrape(request: FastifyRequest, token: Buffer | undefined): boolean {
  // `request.ip` is the client as trusted proxies tell it (TRUST_PROXY); a request that names a forwarded client
  // came through a proxy, which may well run on this host, so it is not a local scraper whatever its peer.
  const forwarded = request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined;
  if (!forwarded && LOOPBACK.has(request.ip)) return true;
  // No principal on the worker's listener, which authenticates nobody.
  if (isAdmin(request.principal ?? null)) return true;
  const authorization = request.headers.authorization;
  if (token && authorization?.startsWith('Bearer ')) {
    // Digests of equal length, compared in constant time: neither the token nor its length leaks through timing.
    return timingSafeEqual(digest(authorization.slice(7).trim()), token);
  }
  return false;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
