import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLog } from '../../src/delivery/failure-log.js';
import { readProcessConfig } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { ADMIN_PASSWORD, openTestDatabase, secretsKeyEnv, type TestDatabase } from '../support/test-service.js';

// What an operator sees by default: the log at info, and the API's metrics.

/** A pino destination that keeps each line, parsed. */
function logLines(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

describe('the log and the metrics at the default level', () => {
  let testDb: TestDatabase;
  let service: Service;
  const log = logLines();

  beforeAll(async () => {
    testDb = await openTestDatabase();
    const config = readProcessConfig({ ADMIN_PASSWORD, ROLE: 'api', ...secretsKeyEnv(testDb) });
    service = await startService({ config, logger: createLogger('info', log.stream), db: testDb.db });
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.dispose();
  });

  it('logs no request of the health probes or of a scrape at info, and logs the other requests', async () => {
    const before = log.lines.length;
    for (const url of ['/health', '/health/live', '/health/ready', '/metrics']) expect((await service.app.inject({ url, remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect((await service.app.inject({ url: '/api/auth/me' })).statusCode).toBe(401);
    const urls = log.lines.slice(before).map((line) => (line.req as { url?: string } | undefined)?.url).filter(Boolean);
    expect(urls).toEqual(['/api/auth/me']);
  });

  it('times API requests by route pattern and status, and tells the build', async () => {
    await service.app.inject({ url: '/api/admin/webhooks/12345' }); // an id in the path: one series for the route
    await service.app.inject({ url: '/no/such/route' });
    const text = (await service.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).body;
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/api\/admin\/webhooks\/:webhookId",status_code="401"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="404"\} 1$/m);
    expect(text).not.toContain('12345');
    expect(text).toMatch(/^alert_webhooks_build_info\{version="\d+\.\d+\.\d+",node_version="v\d+\.\d+\.\d+"\} 1$/m);
  });
});

describe('failed attempts at warn', () => {
  it('logs the first failure of a webhook at once, then one line per interval with the count held back, each webhook apart', () => {
    const log = logLines();
    let now = 1_000_000;
    const failures = new FailureLog(createLogger('info', log.stream), 60_000, () => now);
    const retry = { status: 'pending' as const, error: 'connection refused', responseStatus: null, nextAttemptAt: now + 60_000 };
    const gaveUp = { status: 'failed' as const, error: 'HTTP 500', responseStatus: 500, nextAttemptAt: null };
    // A dead receiver: a thousand failures in a minute, a few of them the last attempt.
    for (let i = 1; i <= 1000; i++) failures.failed({ id: i, webhookId: 7, attempts: 1 }, i % 100 === 0 ? gaveUp : retry);
    failures.failed({ id: 5000, webhookId: 8, attempts: 3 }, gaveUp);
    now += 60_000;
    failures.failed({ id: 1001, webhookId: 7, attempts: 2 }, retry);
    const lines = log.lines.map(({ level, msg, webhookId, deliveryId, heldBackFailedAttempts, heldBackGivenUp }) => ({ level, msg, webhookId, deliveryId, heldBackFailedAttempts, heldBackGivenUp }));
    expect(lines).toEqual([
      { level: 40, msg: 'delivery attempt failed: retried on the schedule', webhookId: 7, deliveryId: 1, heldBackFailedAttempts: undefined, heldBackGivenUp: undefined },
      { level: 40, msg: 'delivery failed: its retries are used up; redeliver it once the receiver works', webhookId: 8, deliveryId: 5000, heldBackFailedAttempts: undefined, heldBackGivenUp: undefined },
      { level: 40, msg: 'delivery attempt failed: retried on the schedule', webhookId: 7, deliveryId: 1001, heldBackFailedAttempts: 999, heldBackGivenUp: 10 },
    ]);
  });
});
