import { request } from 'node:http';
import { readProcessConfig } from '../env.js';
import { OperatorError } from './startup-failures.js';

// Within a container's health-check time-out (Dockerfile: 5 s), with room for Node's start.
const TIMEOUT_MS = 3_000;

/**
 * `healthcheck`: asks this machine's service, as the same environment describes it, whether it is alive
 * (GET /health/live), for a container's HEALTHCHECK, where no curl is installed. The API port, or for ROLE=worker
 * METRICS_PORT. Liveness only: a database away is not a reason to restart the container (see health.routes.ts).
 */
export async function healthcheck(): Promise<void> {
  const config = readProcessConfig();
  const port = config.role === 'worker' ? config.metricsPort : config.port;
  if (port === 0) throw new OperatorError('nothing to check: ROLE=worker with METRICS_PORT=0 listens on no port');
  // A service that listens on every address answers on loopback; one bound to one address, there.
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  const status = await new Promise<number>((resolve, reject) => {
    const asked = request({ host, port, path: '/health/live', timeout: TIMEOUT_MS }, (answer) => {
      answer.resume();
      resolve(answer.statusCode ?? 0);
    });
    asked.on('timeout', () => asked.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    asked.on('error', reject);
    asked.end();
  }).catch((err: unknown) => {
    throw new OperatorError(`http://${host}:${port}/health/live: ${(err as Error).message}`);
  });
  if (status !== 200) throw new OperatorError(`http://${host}:${port}/health/live answered ${status}`);
  console.log(`alive: http://${host}:${port}/health/live answered 200`);
}
