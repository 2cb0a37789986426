import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/index.js';
import { decodeSecretsKey, KEY_FILE_NAME, secretsKeyOf } from '../../src/secrets/keyring.js';
import { sealedKeyId, sealSecret } from '../../src/secrets/secret-box.js';
import { cli, dbEnv } from '../cli/cli-support.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { runCli, stopCli, waitUntil } from '../support/processes.js';
import { TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, openTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/test-service.js';

const onPostgres = process.env.TEST_DB === 'postgres';

const newKey = () => randomBytes(32).toString('base64');
const idOf = (key: string) => secretsKeyOf(decodeSecretsKey(key, 'test')).id;
/** No key from the environment the tests run in: each step says which keys it has. */
const NO_KEYS = { SECRETS_KEY: '', SECRETS_KEY_FILE: '', SECRETS_KEY_PREVIOUS: '' };

interface Sealed {
  id: number;
  version: number;
  secret: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}
const sealedRows = async (db: Database): Promise<Sealed[]> =>
  (await db.query<Sealed>('SELECT id, version, secret, secret_sealed, previous_secret_sealed FROM webhooks ORDER BY id')).rows;
/** The key id of every sealed value, secret and previous secret alike. */
const keyIdsOf = (rows: Sealed[]) => new Set(rows.flatMap((r) => [r.secret_sealed, r.previous_secret_sealed].filter((s) => s !== null).map((s) => sealedKeyId(s!))));

/** `rekey` (issue 11, item 2): sealing every secret again under a new key, as an operator runs it. */
describe('alert-webhooks rekey', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function receivers(count: number): Promise<TestReceiver[]> {
    const started = await Promise.all(Array.from({ length: count }, () => TestReceiver.start()));
    cleanups.push(() => Promise.all(started.map((r) => r.close())));
    return started;
  }

  /** A service of this process on `testDb` with these keys, on a database of its own (the CLI's is closed). */
  async function withService<T>(testDb: TestDatabase, env: Record<string, string>, work: (t: TestService) => Promise<T>): Promise<T> {
    const db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    try {
      const t = await startTestService({ testDb: { ...testDb, db }, env });
      try {
        return await work(t);
      } finally {
        await t.service.close();
      }
    } finally {
      await db.close();
    }
  }

  /** One new case: every webhook subscribed to newCase gets one delivery, sent by the worker of `t`. */
  async function deliverRound(t: TestService, alertId: number, node: string, to: TestReceiver[]): Promise<void> {
    const before = to.map((r) => r.received.length);
    await reportMatches(t.admin, 'src', alertId, [{ nodes: [node] }]);
    await t.service.engine.worker.drain();
    expect(to.map((r) => r.received.length)).toEqual(before.map((n) => n + 1));
  }
  const lastVerifies = (receiver: TestReceiver, secret: string, previous?: string) => {
    const request = receiver.received.at(-1)!;
    expect(verifyPayloadHmac(secret, request.body, request.headers['x-payload-hmac'])).toBe(true);
    expect(verifyStandardWebhook(secret, request.body, request.headers)).toBe(true);
    if (previous !== undefined) expect(verifyStandardWebhook(previous, request.body, request.headers)).toBe(true);
  };

  it(`${onPostgres ? 'PostgreSQL' : 'embedded'}: secrets under key A, services on B with A as previous; rekey seals all under B, then a process with B alone delivers`, async () => {
    const testDb = await openTestDatabase();
    cleanups.push(() => testDb.dispose());
    await testDb.db.close(); // each step opens its own
    const [r1, r2, r3, r4] = (await receivers(4)) as [TestReceiver, TestReceiver, TestReceiver, TestReceiver];
    const keyDir = mkdtempSync(path.join(tmpdir(), 'aw-rekey-'));
    cleanups.push(async () => rmSync(keyDir, { recursive: true, force: true }));

    // Key A: on PostgreSQL SECRETS_KEY; embedded the DATA_DIR/secrets.key made by the first start.
    const givenA = newKey();
    const envA = onPostgres ? { ...NO_KEYS, SECRETS_KEY: givenA } : NO_KEYS;
    let alertId = 0;
    const keyA = await withService(testDb, envA, async (t) => {
      await createSource(t.admin, 'src');
      alertId = (await createAlert(t.admin, 'src')).id;
      await createWebhook(t.admin, { url: r1.url, secret: 'rekey-secret-one-kept', events: [{ eventType: 'newCase' }] });
      const h2 = await createWebhook(t.admin, { url: r2.url, secret: 'rekey-secret-two-before', events: [{ eventType: 'newCase' }] });
      expect((await t.admin.post(`/api/admin/webhooks/${h2.id}/secret`, { secret: 'rekey-secret-two-after', overlapMs: 3_600_000 })).status).toBe(200);
      const h3 = await createWebhook(t.admin, { url: r3.url, secret: 'rekey-secret-three-before', events: [{ eventType: 'newCase' }] });
      expect((await t.admin.post(`/api/admin/webhooks/${h3.id}/secret`, { secret: 'rekey-secret-three-after', overlapMs: 3_600_000 })).status).toBe(200);
      // Its overlap over: the previous secret signs nothing, and rekey drops it rather than seal it again.
      await t.db.query(`UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 minute' WHERE id = $1`, [h3.id]);
      await deliverRound(t, alertId, 'a', [r1, r2, r3]);
      return onPostgres ? givenA : readFileSync(path.join(testDb.dataDir!, KEY_FILE_NAME), 'utf8').trim();
    });

    // Key B, with A as previous: what was sealed under A still opens, what is new is sealed under B.
    const keyB = newKey();
    const keyFileB = path.join(keyDir, 'new.key');
    writeFileSync(keyFileB, `${keyB}\n`, { mode: 0o600 });
    const envB = onPostgres ? { ...NO_KEYS, SECRETS_KEY: keyB } : { ...NO_KEYS, SECRETS_KEY_FILE: keyFileB };
    const originB = onPostgres ? 'SECRETS_KEY' : keyFileB;
    await withService(testDb, { ...envB, SECRETS_KEY_PREVIOUS: keyA }, async (t) => {
      await createWebhook(t.admin, { url: r4.url, secret: 'rekey-secret-four-under-b', events: [{ eventType: 'newCase' }] });
      await deliverRound(t, alertId, 'b', [r1, r2, r3, r4]);
      lastVerifies(r1, 'rekey-secret-one-kept');
      lastVerifies(r2, 'rekey-secret-two-after', 'rekey-secret-two-before');
      lastVerifies(r3, 'rekey-secret-three-after');
      lastVerifies(r4, 'rekey-secret-four-under-b');
    });
    const db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    const before = await sealedRows(db);
    await db.close();
    expect(keyIdsOf(before)).toEqual(new Set([idOf(keyA), idOf(keyB)]));

    // Without A, rekey says which key it lacks, and changes nothing.
    const lacking = await cli(['rekey'], { ...dbEnv(testDb), ...envB });
    expect(lacking).toMatchObject({ code: 1, stdout: '' });
    expect(lacking.stderr).toBe(
      `alert-webhooks: webhook secrets are sealed under key ${idOf(keyA)} (3 webhooks), which this process does not have: its key is ${idOf(keyB)} (from ${originB}) ` +
        'and SECRETS_KEY_PREVIOUS is unset. Give rekey the key that sealed them as SECRETS_KEY_PREVIOUS, beside the new one as SECRETS_KEY (or SECRETS_KEY_FILE)\n',
    );
    expect(lacking.stderr).not.toContain(keyA);

    const rekeyed = await cli(['rekey'], { ...dbEnv(testDb), ...envB, SECRETS_KEY_PREVIOUS: keyA });
    expect(rekeyed.stderr).toBe('');
    expect(rekeyed.code).toBe(0);
    expect(rekeyed.stdout).toBe(
      `4 secrets re-sealed under key ${idOf(keyB)} (from ${originB}), 1 expired previous secret dropped; 0 webhooks left with a secret under another key.\n`,
    );
    const again = await cli(['rekey'], { ...dbEnv(testDb), ...envB, SECRETS_KEY_PREVIOUS: keyA });
    expect(again.stdout).toBe(`0 secrets re-sealed under key ${idOf(keyB)} (from ${originB}); 0 webhooks left with a secret under another key.\n`);

    const reopened = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    const after = await sealedRows(reopened);
    await reopened.close();
    expect(keyIdsOf(after)).toEqual(new Set([idOf(keyB)]));
    // The secrets are the same: no version moved, so no worker reloads anything. h3's stale previous secret is gone.
    expect(after.map((r) => r.version)).toEqual(before.map((r) => r.version));
    expect(after.map((r) => r.previous_secret_sealed !== null)).toEqual([false, true, false, false]);
    expect(after[3]!.secret_sealed).toBe(before[3]!.secret_sealed); // under B already: untouched

    // Embedded, the new key becomes DATA_DIR/secrets.key (a rename: the file is whole under either name).
    if (!onPostgres) renameSync(keyFileB, path.join(testDb.dataDir!, KEY_FILE_NAME));
    const onlyB = onPostgres ? envB : NO_KEYS;
    await withService(testDb, onlyB, async (t) => {
      expect(t.service.keyring).toMatchObject({ current: { id: idOf(keyB) }, previous: undefined });
      await deliverRound(t, alertId, 'c', [r1, r2, r3, r4]);
      lastVerifies(r1, 'rekey-secret-one-kept');
      lastVerifies(r2, 'rekey-secret-two-after', 'rekey-secret-two-before');
      lastVerifies(r3, 'rekey-secret-three-after');
      lastVerifies(r4, 'rekey-secret-four-under-b');
    });

    // The old key alone opens nothing any more: `serve` refuses in one line, naming key ids only. (On PostgreSQL only:
    // an embedded process takes long to start on a busy machine, and the in-process refusal is tested on both.)
    if (!onPostgres) return;
    const serveA = runCli(['serve'], { ...dbEnv(testDb), ...NO_KEYS, SECRETS_KEY: keyA, ROLE: 'all', HOST: '127.0.0.1', PORT: '0', ADMIN_PASSWORD });
    const refused = await serveA.finished.finally(() => stopCli(serveA, 'SIGKILL'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `alert-webhooks: webhook secrets are sealed under key ${idOf(keyB)} (4 webhooks), which this process does not have: its key is ${idOf(keyA)} (from SECRETS_KEY) ` +
        'and SECRETS_KEY_PREVIOUS is unset. Start it with the key that sealed them, or with that key as SECRETS_KEY_PREVIOUS and then run "alert-webhooks rekey" (docs/operations.md)\n',
    );
    }, 300_000);

  if (onPostgres) {
    it('PostgreSQL: rekey beside a running service that delivers and rotates, waiting for a row locked by another change', async () => {
      const testDb = await openTestDatabase();
      cleanups.push(() => testDb.dispose());
      const [r1, r2] = (await receivers(2)) as [TestReceiver, TestReceiver];
      const keyA = newKey();
      const keyB = newKey();
      let alertId = 0;
      let fillerIds: number[] = [];
      let t = await startTestService({ testDb, env: { SECRETS_KEY: keyA } });
      try {
        await createSource(t.admin, 'src');
        alertId = (await createAlert(t.admin, 'src')).id;
        await createWebhook(t.admin, { url: r1.url, secret: 'running-secret-one', events: [{ eventType: 'newCase' }] });
        const h2 = await createWebhook(t.admin, { url: r2.url, secret: 'running-secret-two-before', events: [{ eventType: 'newCase' }] });
        expect((await t.admin.post(`/api/admin/webhooks/${h2.id}/secret`, { secret: 'running-secret-two-after', overlapMs: 3_600_000 })).status).toBe(200);
        // 150 more under A, subscribed to nothing: two batches' worth.
        const sealed = Array.from({ length: 150 }, (_, i) => sealSecret(`filler-secret-${i}`, t.service.keyring));
        fillerIds = (
          await t.db.query<{ id: number }>(`INSERT INTO webhooks (url, secret_sealed) SELECT 'http://127.0.0.1:9/filler', unnest($1::text[]) RETURNING id`, [sealed])
        ).rows.map((r) => r.id);
        await t.service.close();

        t = await startTestService({ testDb, env: { SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA } });
        await deliverRound(t, alertId, 'before', [r1, r2]);
        const service = t;
        // Another change holds one row: rekey does the rest in its batches, then waits for that row.
        await testDb.db.withConnection(async (conn) => {
          await conn.query('BEGIN');
          await conn.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [fillerIds[0]]);
          const run = runCli(['rekey'], { ...dbEnv(testDb), ...NO_KEYS, SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA });
          cleanups.push(() => stopCli(run, 'SIGKILL'));
          await waitUntil(
            async () =>
              (await testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0]!
                .n === 1,
            'rekey waits for the locked row',
            60_000,
          );
          const midway = await sealedRows(testDb.db);
          expect(midway.filter((r) => keyIdsOf([r]).has(idOf(keyA))).map((r) => r.id)).toEqual([fillerIds[0]]);
          // Meanwhile the service delivers, and a rotation seals under B.
          await deliverRound(service, alertId, 'during', [r1, r2]);
          lastVerifies(r1, 'running-secret-one');
          lastVerifies(r2, 'running-secret-two-after', 'running-secret-two-before');
          expect((await service.admin.post(`/api/admin/webhooks/${h2.id}/secret`, { secret: 'running-secret-two-rotated', overlapMs: 3_600_000 })).status).toBe(200);
          await deliverRound(service, alertId, 'rotated', [r1, r2]);
          lastVerifies(r2, 'running-secret-two-rotated', 'running-secret-two-after');
          await conn.query(`UPDATE webhooks SET description = 'changed meanwhile' WHERE id = $1`, [fillerIds[0]]);
          await conn.query('COMMIT');
          const finished = await run.finished;
          expect(finished.stderr).toBe('');
          expect(finished.code).toBe(0);
          // h1, h2's secret and previous secret, the 150 others: none twice.
          expect(finished.stdout).toBe(`153 secrets re-sealed under key ${idOf(keyB)} (from SECRETS_KEY); 0 webhooks left with a secret under another key.\n`);
        });
        expect(keyIdsOf(await sealedRows(testDb.db))).toEqual(new Set([idOf(keyB)]));
        await t.service.close();

        t = await startTestService({ testDb, env: { SECRETS_KEY: keyB } });
        await deliverRound(t, alertId, 'after', [r1, r2]);
        lastVerifies(r1, 'running-secret-one');
        lastVerifies(r2, 'running-secret-two-rotated', 'running-secret-two-after');
      } finally {
        await t.service.close();
      }
        }, 120_000);
  }
});
