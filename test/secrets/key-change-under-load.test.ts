import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { decodeSecretsKey, keyringOf } from '../../src/secrets/keyring.js';
import { sealSecret } from '../../src/secrets/secret-box.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TEST_SECRETS_KEY } from '../support/processes.js';
import { TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

// A rolling key change seen from a process still on the old key: one webhook's secret was sealed (rotated) by a
// process that already has the new key, which this one lacks.
describe('a webhook whose secret this process cannot open', () => {
  let t: TestService;
  let receiver: TestReceiver;
  const lines: { level: number; msg: string; webhookId?: number; reason?: string }[] = [];
  const newKey = randomBytes(32).toString('base64');
  beforeAll(async () => {
    receiver = await TestReceiver.start();
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    t = await startTestService({ logger });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('holds back only that webhook, gives its claims back at once uncounted, and sends every other webhook’s deliveries', async () => {
    await createSource(t.admin, 'rotation');
    const alert = await createAlert(t.admin, 'rotation');
    const readable = await createWebhook(t.admin, { url: `${receiver.url}?readable` });
    const sealedElsewhere = await createWebhook(t.admin, { url: `${receiver.url}?sealed-elsewhere` });
    await reportMatches(t.admin, 'rotation', alert.id, Array.from({ length: 30 }, (_, i) => ({ nodes: [`n${i}`] })));
    // The other process rotated the secret under the new key (and moved the version, as a rotation does).
    const sealed = sealSecret('rotated-secret-value', keyringOf(decodeSecretsKey(newKey, 'new key')));
    await t.db.query('UPDATE webhooks SET secret_sealed = $1, version = version + 1 WHERE id = $2', [sealed, sealedElsewhere.id]);

    const worker = t.service.engine.worker;
    await worker.drain();
    await worker.drain();

    expect(receiver.received).toHaveLength(30);
    expect(receiver.received.every((r) => r.headers['webhook-id'] !== undefined)).toBe(true);
    const { rows } = await t.db.query<{ webhookId: number; status: string; attempts: number; locked: boolean; n: number }>(
      `SELECT webhook_id AS "webhookId", status, attempts, locked_until IS NOT NULL AS locked, count(*)::int AS n
       FROM webhook_deliveries GROUP BY 1, 2, 3, 4 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { webhookId: readable.id, status: 'sent', attempts: 1, locked: false, n: 30 },
      // Pending, due, not locked, no attempt counted: a process with the key takes them at its next claim.
      { webhookId: sealedElsewhere.id, status: 'pending', attempts: 0, locked: false, n: 30 },
    ]);
    const told = lines.filter((line) => line.msg.startsWith("this process cannot open the webhook's secret"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 40, webhookId: sealedElsewhere.id });
    expect(told[0]!.reason).toMatch(/sealed under key [0-9a-f]{8}, which this process does not have/);
    expect(JSON.stringify(lines)).not.toContain('rotated-secret-value');

    // A ping is one attempt now: it ends failed, saying why, and is not sent.
    const ping = await t.admin.post(`/api/admin/webhooks/${sealedElsewhere.id}/ping`);
    expect(ping).toMatchObject({ status: 200, body: { status: 'failed', attempts: 1 } });
    expect(ping.body.error).toMatch(/^not sent: this process cannot open the webhook's secret \(a secret is sealed under key /);
    expect(receiver.received).toHaveLength(30);
  });

  it('leaves them to a process that has the key, which sends them', async () => {
    // The key every secret but one is sealed under: the suite's on PostgreSQL, the embedded DATA_DIR's key file.
    const oldKey = t.testDb.kind === 'postgres' ? TEST_SECRETS_KEY : readFileSync(path.join(t.testDb.dataDir!, 'secrets.key'), 'utf8').trim();
    // The embedded database serves one process at a time: there, the same process restarted with both keys.
    if (t.testDb.kind === 'pglite') await t.service.close();
    const other = await startTestService({ testDb: t.testDb, env: { SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey } });
    try {
      await other.service.engine.worker.drain();
      expect(receiver.received).toHaveLength(60);
      expect(receiver.received.slice(30).every((r) => r.headers['x-payload-hmac'] !== undefined)).toBe(true);
    } finally {
      await other.close();
    }
  });
});
