import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { RunDependencies } from './alerts/alert-run.js';
import { registerSourceAccess } from './access/access-hook.js';
import { groupAdminRoutes, groupRoutes } from './access/groups.routes.js';
import { recordMembershipChange } from './access/groups.service.js';
import { describeUserAccess } from './access/user-access.js';
import { alertRunRoutes } from './alerts/alert-runs.routes.js';
import { alertRoutes } from './alerts/alerts.routes.js';
import { caseInboxRoutes } from './alerts/case-inbox.routes.js';
import { auditRoutes } from './audit/audit.routes.js';
import { applicationRoutes } from './auth/applications.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { registerAuthentication, withAccess } from './auth/authenticate.js';
import { initialPasswordPath } from './auth/initial-password.js';
import { userRoutes } from './auth/users.routes.js';
import type { ProcessConfig } from './env.js';
import type { SettingsStore } from './settings/settings-store.js';
import { settingsRoutes } from './settings/settings.routes.js';
import { consoleRoutes } from './console/console.routes.js';
import type { Database } from './db/database.js';
import { healthOverTimeRoutes } from './delivery/health-over-time.routes.js';
import { deliverySearchRoutes } from './delivery/delivery-search.routes.js';
import { deliveryRoutes } from './delivery/delivery.routes.js';
import type { DeliveryWorker } from './delivery/worker.js';
import { limitConnectionsPerAddress, requestDeadlineOptions } from './http/connection-limits.js';
import { answerClientError, answerFrameworkError, MAX_PATH_PARAM_LENGTH, registerErrorHandling } from './http/error-handler.js';
import { healthRoutes, type HealthOptions } from './http/health.routes.js';
import { openapiOptions } from './openapi.js';
import { registerJsonBodies, registerQueryTextCheck, schemaErrorFormatter, validatorCompiler } from './http/validation.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics/metrics.js';
import type { Keyring } from './secrets/keyring.js';
import { metricsRoutes } from './metrics/metrics.routes.js';
import { graphRoutes } from './sources/graph.routes.js';
import type { GraphRegistry } from './sources/graph-registry.js';
import { QuerySlots } from './sources/query-slots.js';
import { dataSourceListRoutes, sourceRoutes } from './sources/sources.routes.js';
import { webhookRoutes } from './webhooks/webhooks.routes.js';

export interface AppDependencies {
  db: Database;
  settings: SettingsStore;
  config: ProcessConfig;
  logger: Logger;
  worker: DeliveryWorker;
  /** Seals the webhook secrets the API is given. */
  keyring: Keyring;
  /** Where this process runs the delivery schedules: why they are not running (for /health/ready). */
  schedules?: HealthOptions['schedules'];
  /** The process's metrics, served at GET /metrics (loopback, Admin, or METRICS_TOKEN). */
  metrics?: Metrics;
  /** The data sources' graphs. */
  graphs: GraphRegistry;
  /** What running an alert needs (POST …/run runs it in this process when asked to wait). */
  alertRuns: RunDependencies;
  /** Where this process runs the alert schedule: looks for due runs now. */
  kickAlertRuns?: () => void;
}

/**
 * Builds the HTTP API. Order matters and is spelled out: framework plugins, then the cross-cutting
 * hooks (errors, authentication), then the routes of each module.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { db, settings, config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    // Slow clients: a deadline for each request, and a cap on connections per address (src/http/connection-limits.ts).
    ...requestDeadlineOptions(config),
    schemaErrorFormatter,
    trustProxy: config.trustProxy,
    // Path parameters are checked by the route schemas, which name the parameter; the router's own length limit
    // is only a backstop. What the router and Node's HTTP parser refuse still answers {key, message}.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
  limitConnectionsPerAddress(app.server, config.maxConnectionsPerAddress);
  app.setValidatorCompiler(validatorCompiler);
  registerJsonBodies(app);
  registerQueryTextCheck(app);

  // 1. Framework plugins.
  await app.register(cookie);
  await app.register(swagger, openapiOptions());

  // 2. Cross-cutting: one error shape; who the caller is, and the guard on each route's declared access. From
  //    here on a route that declares no access (`config: { access }`, or `withAccess` for a whole module) stops
  //    the start (src/auth/authenticate.ts).
  registerErrorHandling(app);
  registerAuthentication(app, db, { publicBaseUrl: config.publicBaseUrl });
  // Then, on a route with a :sourceKey, what the caller's groups let them do there (src/access/access-hook.ts).
  registerSourceAccess(app, db);
  if (deps.metrics) countRequests(app, deps.metrics);

  // 3. Routes, module by module. A module whose routes all share one access declares it here (`withAccess`), the
  //    others route by route.
  await app.register(withAccess('public', healthRoutes), { db, schedules: deps.schedules, graphs: () => deps.graphs.health(db, 2_000) });
  await app.register(authRoutes, { db, config, describeAccess: describeUserAccess });
  await app.register(withAccess('admin', userRoutes), { db, initialPasswordFile: initialPasswordPath(config.dataDir), membershipLog: recordMembershipChange });
  await app.register(withAccess('admin', applicationRoutes), { db, membershipLog: recordMembershipChange });
  await app.register(withAccess('admin', groupAdminRoutes), { db });
  await app.register(withAccess('user', groupRoutes), { db });
  await app.register(settingsRoutes, { settings, publicBaseUrl: config.publicBaseUrl });
  await app.register(withAccess('admin', sourceRoutes), { db, keyring: deps.keyring, graphs: deps.graphs });
  await app.register(withAccess('user', dataSourceListRoutes), { db, graphs: deps.graphs });
  const querySlots = new QuerySlots();
  await app.register(withAccess('user', graphRoutes), { db, graphs: deps.graphs, metrics: deps.metrics, slots: querySlots });
  await app.register(alertRoutes, { db, publicBaseUrl: config.publicBaseUrl, graphs: deps.graphs, limits: config.alertLimits, slots: querySlots });
  await app.register(withAccess('user', caseInboxRoutes), { db, publicBaseUrl: config.publicBaseUrl });
  await app.register(alertRunRoutes, { run: deps.alertRuns, kick: deps.kickAlertRuns, slots: querySlots });
  await app.register(withAccess('admin', auditRoutes), { db });
  await app.register(withAccess('admin', webhookRoutes), {
    db,
    settings,
    receiverPolicy: config.receiverPolicy,
    keyring: deps.keyring,
    onDeleted: (webhookId) => deps.metrics?.forgetWebhook(webhookId),
  });
  await app.register(withAccess('admin', deliveryRoutes), { db, settings, worker: deps.worker });
  await app.register(withAccess('admin', healthOverTimeRoutes), { db, settings });
  await app.register(withAccess('admin', deliverySearchRoutes), { db, settings });
  await app.register(consoleRoutes);
  if (deps.metrics) await app.register(metricsRoutes, { metrics: deps.metrics, token: config.metricsToken });

  app.get('/api/openapi.json', { schema: { hide: true }, config: { access: 'public', sessionless: true } }, async () => app.swagger());
  return app;
}

/**
 * Times every answer into http_request_duration_seconds. `reply.elapsedTime` runs from the request's arrival to the
 * end of the answer, whatever hooks or errors came between; a route's pattern is undefined when none matched.
 */
function countRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}
