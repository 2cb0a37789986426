import { readProcessConfig, redactUrl } from '../env.js';
import { schedulesProblem } from '../delivery/schedule-health.js';
import { startOperationsServer } from '../http/operations-server.js';
import { createLogger } from '../logger.js';
import { metricsRoutes } from '../metrics/metrics.routes.js';
import { startService, type Service } from '../service.js';
import { explainStartupFailure, listenFailure } from './startup-failures.js';

/**
 * `serve`: the service, as ROLE says. ROLE=worker listens for no API, so its health checks and its metrics are
 * on METRICS_PORT instead; 0 leaves it without a listener. A start that fails for a reason in the
 * environment (port taken, database out of reach, DATA_DIR not writable) ends with that reason in one line.
 */
export async function serve(): Promise<void> {
  const config = readProcessConfig();
  const logger = createLogger(config.logLevel);
  let service: Service | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  let address: string | undefined;
  let operationsAddress: string | undefined;
  try {
    service = await startService({ config, logger });
    closers.push(() => service!.close());
    if (config.role !== 'worker') {
      const began = performance.now();
      address = await service.app.listen({ port: config.port, host: config.host }).catch((err: unknown) => {
        throw listenFailure(err, 'PORT', config.host, config.port);
      });
      logger.info({ phase: 'listening', durationMs: Math.round(performance.now() - began) }, 'start: listening');
    } else if (config.metricsPort !== 0) {
      const running = service;
      const operations = await startOperationsServer({
        db: running.db,
        schedules: () => schedulesProblem(running.engine, running.settings.webhooks),
        logger,
        host: config.host,
        port: config.metricsPort,
        limits: config,
        metrics: (app) => metricsRoutes(app, { metrics: running.metrics, token: config.metricsToken }),
      }).catch((err: unknown) => {
        throw listenFailure(err, 'METRICS_PORT', config.host, config.metricsPort);
      });
      operationsAddress = operations.address;
      // Closed first: a stopping process stops answering its probes before it stops working.
      closers.unshift(() => operations.app.close());
    }
  } catch (err) {
    for (const close of closers) await close().catch(() => {});
    throw explainStartupFailure(err, config);
  }
  logger.info(
    {
      address,
      health: operationsAddress,
      database: config.databaseUrl ? redactUrl(config.databaseUrl) : `embedded (${config.dataDir})`,
      role: config.role,
      // Since the process started (Node's own start and the modules' loading included): the phases are logged above.
      startMs: Math.round(process.uptime() * 1000),
    },
    config.role === 'worker' ? 'alert-webhooks worker is running' : 'alert-webhooks is serving',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight work');
    for (const close of closers) await close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
