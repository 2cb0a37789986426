import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { pendingMigrations } from '../db/migration-status.js';

// A database that hangs is as down as one that refuses: /health answers within about this long either way.
const HEALTH_TIMEOUT_MS = 3000;
// Probes come every few seconds from every orchestrator and balancer: their request lines would bury the log at
// info. What a probe finds that matters (down, back, not ready) is logged at warn or info by the handlers below,
// once per change, whatever this level.
export const PROBE_LOG_LEVEL = 'warn';

export interface HealthOptions {
  db: Database;
  /**
   * On a process that runs the delivery schedules: why they are not running, or undefined when they are
   * (src/delivery/schedule-health.ts). Left out where the role runs none (ROLE=api).
   */
  schedules?: (() => string | undefined) | undefined;
  /** Each data source's graph: reachable or not, and its round trip. Reported by /health/ready, never failing it. */
  graphs?: (() => Promise<GraphReport[]>) | undefined;
}

interface GraphReport {
  sourceKey: string;
  vendor: string;
  up: boolean;
  latencyMs?: number | undefined;
}

const GraphsReport = Type.Optional(
  Type.Array(Type.Object({ sourceKey: Type.String(), vendor: Type.String(), up: Type.Boolean(), latencyMs: Type.Optional(Type.Number()) }), {
    description: "each data source's graph: whether it answered, and how long its round trip took; one graph down does not fail readiness",
  }),
);

const Unavailable = Type.Object({ status: Type.Literal('unavailable'), message: Type.String() });

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
export async function healthRoutes(app: FastifyInstance, { db, schedules, graphs }: HealthOptions): Promise<void> {
  // Logged when the answer changes, not on every probe of an outage.
  let wasOk = true;
  app.get(
    '/health',
    {
      config: { access: 'public', sessionless: true },
      logLevel: PROBE_LOG_LEVEL,
      schema: {
        operationId: 'getHealth',
        tags: ['operations'],
        summary: '200 when the database answers (or is busy working), 503 when it does not',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Unavailable },
      },
    },
    async (request, reply) => {
      const health = await db.health(HEALTH_TIMEOUT_MS);
      if (health.ok) {
        if (!wasOk) app.log.info('health check: the database answers again');
        wasOk = true;
        return { status: 'ok' as const };
      }
      // The reason is for the operator's log, not the answer (it may name hosts).
      if (wasOk) request.log.warn({ reason: health.reason }, 'health check: the database does not answer');
      wasOk = false;
      return reply.status(503).send({ status: 'unavailable' as const, message: 'the database does not answer' });
    },
  );

  // Liveness: the event loop runs and the process answers. Nothing else is checked, so an orchestrator restarts a
  // process that is stuck, never one whose database is away (a restart would not bring the database back).
  app.get(
    '/health/live',
    {
      config: { access: 'public', sessionless: true },
      logLevel: PROBE_LOG_LEVEL,
      schema: { operationId: 'getLiveness', tags: ['operations'], summary: 'Liveness: 200 whenever the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );

  // Readiness: whether this process can do its work now, for a load balancer or a rollout to wait on.
  let wasReady = true;
  // Once every shipped migration was seen applied, a busy embedded database (see /health) need not be asked again.
  let migrated = false;
  app.get(
    '/health/ready',
    {
      config: { access: 'public', sessionless: true },
      logLevel: PROBE_LOG_LEVEL,
      schema: {
        operationId: 'getReadiness',
        tags: ['operations'],
        summary: 'Readiness: 200 when the database answers, its migrations are applied and (where this process runs them) the delivery schedules run; 503 saying which is not',
        response: { 200: Type.Object({ status: Type.Literal('ok'), graphs: GraphsReport }), 503: Unavailable },
      },
    },
    async (request, reply) => {
      const problem = await readinessProblem();
      if (problem === undefined) {
        if (!wasReady) app.log.info('readiness: ready again');
        wasReady = true;
        // The reason a graph is down is for the log and the data source's page, not this public answer (it may name hosts).
        const report = graphs ? (await graphs().catch(() => [])).map(({ sourceKey, vendor, up, latencyMs }) => ({ sourceKey, vendor, up, ...(latencyMs === undefined ? {} : { latencyMs }) })) : [];
        return { status: 'ok' as const, ...(report.length ? { graphs: report } : {}) };
      }
      if (wasReady) request.log.warn({ reason: problem }, 'readiness: not ready');
      wasReady = false;
      return reply.status(503).send({ status: 'unavailable' as const, message: problem });
    },
  );

  async function readinessProblem(): Promise<string | undefined> {
    const health = await db.health(HEALTH_TIMEOUT_MS);
    if (!health.ok) return 'the database does not answer';
    if (!migrated || !health.busy) {
      const pending = await withTimeout(pendingMigrations(db), HEALTH_TIMEOUT_MS).catch(() => undefined);
      if (pending === undefined) {
        if (!migrated) return 'the database does not answer';
      } else if (pending.length > 0) {
        migrated = false;
        return `the database lacks migrations ${pending.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`).join(', ')}: run alert-webhooks migrate`;
      } else {
        migrated = true;
      }
    }
    return schedules?.();
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
