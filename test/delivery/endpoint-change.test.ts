import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPayloadHmac } from '../../src/index.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli, type CliRun } from '../support/processes.js';
import { TestReceiver } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

// On PostgreSQL the change is made through this process's API (ROLE=api, which never sends) and the deliveries go
// out from another process, a real `serve` with ROLE=worker that had the endpoint cached. The embedded database
// serves one process: there the in-process service runs the schedule itself (ROLE=all), its cache just as warm.
const onPostgres = process.env.TEST_DB === 'postgres';
const EVERY_SECOND = '* * * * * *';
const SECRET = 'endpoint-change-secret-1';

describe('a change of a webhook reaches the process that sends (issue 10, item 1)', () => {
  const t = useTestService({ env: { ROLE: onPostgres ? 'api' : 'all' } });
  let worker: CliRun | undefined;
  let before: TestReceiver;
  let after: TestReceiver;
  let alertId: number;
  let node = 0;

  beforeAll(async () => {
    before = await TestReceiver.start();
    after = await TestReceiver.start();
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
    expect((await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: EVERY_SECOND })).status).toBe(204);
    if (onPostgres) {
      worker = runCli(['serve'], { DATABASE_URL: t.testDb.url!, DATA_DIR: '', ROLE: 'worker', ADMIN_PASSWORD: 'x-admin-password', LOG_LEVEL: 'info', METRICS_PORT: '0' });
      await worker.waitForOutput(/worker is running/, 60_000);
    }
  }, 90_000);
  afterAll(async () => {
    if (worker) await stopCli(worker, 'SIGKILL');
    await before?.close();
    await after?.close();
  });

  const newCase = () => reportMatches(t.admin, 'src', alertId, [{ nodes: [`n${++node}`] }]);

  it('the first delivery after a PATCH of the URL goes to the new URL, and after a rotation is signed with the new secret', async () => {
    const hook = await createWebhook(t.admin, { url: before.url, secret: SECRET, events: [{ eventType: 'newCase' }] });
    // Sent once to the first URL: the sending process has the endpoint cached from then on.
    await newCase();
    await before.waitFor(1, 20_000);

    const patched = await t.admin.patch(`/api/admin/webhooks/${hook.id}`, { url: after.url });
    expect(patched.status).toBe(200);
    await newCase();
    // Sent at the schedule's next firing (every second), from a claim that carries the new version of the webhook.
    await after.waitFor(1, 20_000);
    expect(before.received).toHaveLength(1);
    expect(verifyPayloadHmac(SECRET, after.received[0]!.body, after.received[0]!.headers['x-payload-hmac'])).toBe(true);

    const rotated = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, { overlapMs: 0 });
    expect(rotated.status).toBe(200);
    await newCase();
    await after.waitFor(2, 20_000);
    const signed = after.received[1]!;
    expect(verifyPayloadHmac(rotated.body.secret, signed.body, signed.headers['x-payload-hmac'])).toBe(true);
    expect(verifyPayloadHmac(SECRET, signed.body, signed.headers['x-payload-hmac'])).toBe(false);
    expect(before.received).toHaveLength(1);
  }, 90_000);
});
