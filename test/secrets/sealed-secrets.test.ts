import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProcessConfig } from '../../src/env.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { verifyPayloadHmac, verifyStandardWebhook } from '../../src/index.js';
import { createLogger } from '../../src/logger.js';
import { decodeSecretsKey, SecretsKeyError, secretsKeyOf, type Keyring } from '../../src/secrets/keyring.js';
import { openSecret, sealedKeyId } from '../../src/secrets/secret-box.js';
import { startService } from '../../src/service.js';
import { sealPlainSecrets } from '../../src/webhooks/secret-sealing.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TestReceiver, type Received } from '../support/receiver.js';
import { ADMIN_PASSWORD, openTestDatabase, secretsKeyEnv, startTestService, testKeyring, type TestDatabase, type TestService } from '../support/test-service.js';

const onPostgres = process.env.TEST_DB === 'postgres';

// Recognisable in any form a dump or a data file could hold them in.
const SECRET = 'recognisable-secret-9f3c61d0a7e2-current';
const ROTATED = 'recognisable-secret-9f3c61d0a7e2-rotated';
const DESCRIPTION = 'recognisable-description-5b7e04c9';
const forms = (secret: string) => [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), Buffer.from(secret).toString('hex')];

interface SecretColumns {
  id: number;
  secret: string | null;
  secret_sealed: string | null;
  previous_secret: string | null;
  previous_secret_sealed: string | null;
  version: number;
}
const secretColumns = async (db: Database): Promise<SecretColumns[]> =>
  (await db.query<SecretColumns>('SELECT id, secret, secret_sealed, previous_secret, previous_secret_sealed, version FROM webhooks ORDER BY id')).rows;

/** Webhook secrets sealed at rest (issue 11, item 2), through the API, the start, the worker and a loopback receiver. */
describe('webhook secrets sealed at rest', () => {
  let testDb: TestDatabase;
  let t: TestService;
  let receiver: TestReceiver;
  let alertId: number;
  let node = 0;
  beforeAll(async () => {
    // The file's database outlives the restarts below.
    testDb = await openTestDatabase();
    t = await startTestService({ testDb });
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterAll(async () => {
    await t?.close();
    await testDb?.dispose();
    await receiver?.close();
  });

  /** One new case, sent by the worker of `service`: answers the request the receiver got. */
  const deliverOne = async (service: TestService = t): Promise<Received> => {
    const before = receiver.received.length;
    await reportMatches(service.admin, 'src', alertId, [{ nodes: [`n${++node}`] }]);
    await service.service.engine.worker.drain();
    expect(receiver.received.length).toBe(before + 1);
    return receiver.received.at(-1)!;
  };
  const deleteAll = async () => {
    for (const { id } of (await t.admin.get('/api/admin/webhooks')).body.items) await t.admin.delete(`/api/admin/webhooks/${id}`);
  };

  it('stores a secret and its predecessor sealed under the key, never in clear (pg_dump on PostgreSQL, the data files embedded); deliveries verify', async () => {
    const hook = await createWebhook(t.admin, { url: receiver.url, secret: SECRET, description: DESCRIPTION, events: [{ eventType: 'newCase' }] });
    const rotated = await t.admin.post(`/api/admin/webhooks/${hook.id}/secret`, { secret: ROTATED, overlapMs: 3_600_000 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);

    const [row] = await secretColumns(t.db);
    expect(row).toMatchObject({ id: hook.id, secret: null, previous_secret: null });
    expect(sealedKeyId(row!.secret_sealed!)).toBe(t.service.keyring.current.id);
    expect(sealedKeyId(row!.previous_secret_sealed!)).toBe(t.service.keyring.current.id);
    expect(openSecret(row!.secret_sealed!, t.service.keyring)).toBe(ROTATED);
    expect(openSecret(row!.previous_secret_sealed!, t.service.keyring)).toBe(SECRET);

    // Signed with the secret, and with its predecessor during the overlap: both opened in memory only.
    const request = await deliverOne();
    expect(verifyPayloadHmac(ROTATED, request.body, request.headers['x-payload-hmac'])).toBe(true);
    expect(verifyStandardWebhook(ROTATED, request.body, request.headers)).toBe(true);
    expect(verifyStandardWebhook(SECRET, request.body, request.headers)).toBe(true);

    let stored: string;
    if (onPostgres) {
      const url = new URL(testDb.url!);
      const { stdout } = await promisify(execFile)('pg_dump', ['-h', url.hostname, '-p', url.port || '5432', '-U', 'postgres', url.pathname.slice(1)], {
        maxBuffer: 64 * 1024 * 1024,
      });
      stored = stdout;
    } else {
      // The embedded database's files, WAL included, after a checkpoint wrote the table's pages.
      await t.db.query('CHECKPOINT');
      stored = filesUnder(testDb.dataDir!)
        .map((file) => readFileSync(file).toString('latin1'))
        .join('\n');
    }
    // What is searched holds the webhook (its description), so a secret stored in clear would be found.
    expect(stored).toContain(DESCRIPTION);
    expect(stored).toContain(row!.secret_sealed!);
    for (const form of [...forms(SECRET), ...forms(ROTATED)]) expect(stored.includes(form), form).toBe(false);
    await deleteAll();
  });

  it('seals at start the plain secrets of a database written before 0006 (a stale previous one dropped), without moving version; deliveries verify', async () => {
    const other = await TestReceiver.start();
    try {
      // Rows as an older version left them: secrets in clear, one with an overlap running, one with its overlap over.
      const { rows } = await t.db.query<{ id: number }>(
        `INSERT INTO webhooks (url, secret, previous_secret, previous_secret_expires_at) VALUES
           ($1, 'plain-secret-of-an-old-version-1', 'plain-previous-secret-running', now() + interval '1 hour'),
           ($2, 'plain-secret-of-an-old-version-2', 'plain-previous-secret-expired', now() - interval '1 minute')
         RETURNING id`,
        [receiver.url, other.url],
      );
      const ids = rows.map((r) => r.id);
      await t.db.query(`INSERT INTO webhook_subscriptions (webhook_id, position, event_type) SELECT unnest($1::int[]), 0, 'newCase'`, [ids]);
      const before = await secretColumns(t.db);

      await t.service.close();
      t = await startTestService({ testDb });
      const after = await secretColumns(t.db);
      expect(after.map((r) => [r.id, r.secret, r.previous_secret, r.version])).toEqual(before.map((r) => [r.id, null, null, r.version]));
      expect(after.map((r) => sealedKeyId(r.secret_sealed!))).toEqual([t.service.keyring.current.id, t.service.keyring.current.id]);
      expect(after.map((r) => openSecret(r.secret_sealed!, t.service.keyring))).toEqual(['plain-secret-of-an-old-version-1', 'plain-secret-of-an-old-version-2']);
      expect(openSecret(after[0]!.previous_secret_sealed!, t.service.keyring)).toBe('plain-previous-secret-running');
      expect(after[1]!.previous_secret_sealed).toBeNull();

      const request = await deliverOne();
      expect(verifyPayloadHmac('plain-secret-of-an-old-version-1', request.body, request.headers['x-payload-hmac'])).toBe(true);
      expect(verifyStandardWebhook('plain-previous-secret-running', request.body, request.headers)).toBe(true);
      const second = other.received.at(-1)!;
      expect(verifyPayloadHmac('plain-secret-of-an-old-version-2', second.body, second.headers['x-payload-hmac'])).toBe(true);
      expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    } finally {
      await other.close();
      await deleteAll();
    }
  });

  it('refuses to start, in one line naming key ids, with a key that opens none of the sealed secrets, and seals nothing under it', async () => {
    await createWebhook(t.admin, { url: receiver.url, secret: SECRET });
    await t.db.query(`INSERT INTO webhooks (url, secret) VALUES ($1, 'a-plain-secret-left-in-clear')`, [receiver.url]);
    const sealedUnder = t.service.keyring.current.id;
    const wrongKey = 'WRONGkeyWRONGkeyWRONGkeyWRONGkeyWRONGkeyWRO=';
    const wrongId = secretsKeyOf(decodeSecretsKey(wrongKey, 'test')).id;
    const config = readProcessConfig({ ADMIN_PASSWORD, ROLE: 'api', ...secretsKeyEnv(testDb), SECRETS_KEY: wrongKey });
    const refused = await startService({ config, logger: createLogger('silent'), db: t.db }).then(
      () => new Error('the service started with a key that opens nothing'),
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(SecretsKeyError);
    expect((refused as Error).message).toBe(
      `webhook secrets are sealed under key ${sealedUnder} (1 webhook), which this process does not have: its key is ${wrongId} (from SECRETS_KEY) and SECRETS_KEY_PREVIOUS is unset. ` +
        'Start it with the key that sealed them, or with that key as SECRETS_KEY_PREVIOUS and then run "alert-webhooks rekey" (docs/operations.md)',
    );
    // The refusal comes before the sealing: the plain secret was not sealed under the wrong key (the right one seals it).
    expect((await secretColumns(t.db)).filter((r) => r.secret !== null)).toHaveLength(1);
    await t.service.close();
    t = await startTestService({ testDb });
    expect((await secretColumns(t.db)).map((r) => sealedKeyId(r.secret_sealed!))).toEqual([sealedUnder, sealedUnder]);
    await deleteAll();
  });
});

/** The sealing at start, as processes starting at once run it: each row sealed once, by one of them. */
describe('sealing by processes starting at once', () => {
  let testDb: TestDatabase;
  const others: Database[] = [];
  beforeAll(async () => {
    testDb = await openTestDatabase();
  });
  afterAll(async () => {
    for (const db of others) await db.close();
    await testDb?.dispose();
  });

  it(`seals 250 plain secrets in batches, each once, with two processes at it`, async () => {
    const keyring: Keyring = testKeyring();
    await testDb.db.query(`INSERT INTO webhooks (url, secret) SELECT 'http://127.0.0.1:9/old', 'plain-secret-' || i FROM generate_series(1, 250) AS i`);
    // On PostgreSQL a second pool, as a second process has; the embedded database has one connection for all.
    const second = onPostgres ? await createDatabase({ databaseUrl: testDb.url, dataDir: '' }) : testDb.db;
    if (second !== testDb.db) others.push(second);
    const counts = await Promise.all([sealPlainSecrets(testDb.db, keyring), sealPlainSecrets(second, keyring)]);
    expect(counts[0] + counts[1]).toBe(250);
    const rows = await secretColumns(testDb.db);
    expect(rows.filter((r) => r.secret !== null || r.secret_sealed === null)).toEqual([]);
    expect(rows.map((r) => openSecret(r.secret_sealed!, keyring))).toEqual(rows.map((_, i) => `plain-secret-${i + 1}`));
    expect(await sealPlainSecrets(testDb.db, keyring)).toBe(0);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}
