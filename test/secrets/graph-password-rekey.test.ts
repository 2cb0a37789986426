import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { decodeSecretsKey, keyringOf, SecretsKeyError } from '../../src/secrets/keyring.js';
import { openSecret, sealedKeyId, sealSecret } from '../../src/secrets/secret-box.js';
import { requireSealingKeys } from '../../src/webhooks/secret-sealing.js';
import { cli, dbEnv } from '../cli/cli-support.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';

const newKey = () => randomBytes(32).toString('base64');
const NO_KEYS = { SECRETS_KEY: '', SECRETS_KEY_FILE: '', SECRETS_KEY_PREVIOUS: '' };
const PASSWORD = 'bolt-password-never-printed';

/** `rekey` and the start-up key check, for data sources' Bolt passwords (sealed like webhook secrets). */
describe('data source passwords under a new secrets key', () => {
  let testDb: TestDatabase;
  const keyA = newKey();
  const keyB = newKey();
  const keyringA = keyringOf(decodeSecretsKey(keyA, 'A'));
  const keyringB = keyringOf(decodeSecretsKey(keyB, 'B'), decodeSecretsKey(keyA, 'A'));
  const [idA, idB] = [keyringA.current.id, keyringB.current.id];
  const sealedPassword = async () =>
    (await testDb.db.query<{ sealed: string }>(`SELECT graph_password_sealed AS sealed FROM data_sources WHERE key = 'fraud'`)).rows[0]!.sealed;

  beforeAll(async () => {
    testDb = await openTestDatabase();
    // As a service under key A stored it: a Neo4j source whose password is sealed under A (rekey needs no server).
    await testDb.db.query(`INSERT INTO data_sources (key, name, graph, graph_password_sealed) VALUES ('fraud', 'Fraud', $1, $2), ('plain', 'Plain', NULL, NULL)`, [
      JSON.stringify({ vendor: 'neo4j', url: 'bolt://127.0.0.1:7687', user: 'neo4j', allowWrites: false }),
      sealSecret(PASSWORD, keyringA),
    ]);
    await testDb.db.close(); // the CLI opens it (PGlite admits one process)
  });
  afterAll(async () => {
    testDb.db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    await testDb.dispose();
  });

  it('refuses at start, naming the key id and the data source, when the key that sealed a password is missing', async () => {
    const db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    try {
      const refused = await requireSealingKeys(db, keyringOf(decodeSecretsKey(keyB, 'B')), { origin: 'SECRETS_KEY', advice: 'Give it key A.' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SecretsKeyError);
      expect((refused as Error).message).toBe(
        `data source passwords are sealed under key ${idA} (1 data source), which this process does not have: its key is ${idB} (from SECRETS_KEY) and SECRETS_KEY_PREVIOUS is unset. Give it key A.`,
      );
      await expect(requireSealingKeys(db, keyringB, { origin: 'SECRETS_KEY', advice: '' })).resolves.toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('rekey seals the password again under the new key, prints no password, and does nothing the second time', async () => {
    const lacking = await cli(['rekey'], { ...dbEnv(testDb), ...NO_KEYS, SECRETS_KEY: keyB });
    expect(lacking.code).toBe(1);
    expect(lacking.stderr).toContain(`data source passwords are sealed under key ${idA} (1 data source)`);

    const rekeyed = await cli(['rekey'], { ...dbEnv(testDb), ...NO_KEYS, SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA });
    expect(rekeyed.stderr).toBe('');
    expect(rekeyed.code).toBe(0);
    expect(rekeyed.stdout).toBe(
      `0 secrets re-sealed under key ${idB} (from SECRETS_KEY); 0 webhooks left with a secret under another key.\n1 data source password re-sealed under key ${idB} (from SECRETS_KEY).\n`,
    );
    const again = await cli(['rekey'], { ...dbEnv(testDb), ...NO_KEYS, SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA });
    expect(again.stdout).toBe(`0 secrets re-sealed under key ${idB} (from SECRETS_KEY); 0 webhooks left with a secret under another key.\n`);
    for (const output of [lacking, rekeyed, again]) expect(output.stdout + output.stderr).not.toContain(PASSWORD);

    testDb.db = await createDatabase({ databaseUrl: testDb.url, dataDir: testDb.dataDir ?? '' });
    try {
      const sealed = await sealedPassword();
      expect(sealedKeyId(sealed)).toBe(idB);
      expect(sealed).not.toContain(PASSWORD);
      // It opens under the new key alone: A is no longer needed.
      expect(openSecret(sealed, keyringOf(decodeSecretsKey(keyB, 'B')))).toBe(PASSWORD);
      await expect(requireSealingKeys(testDb.db, keyringOf(decodeSecretsKey(keyB, 'B')), { origin: 'SECRETS_KEY', advice: '' })).resolves.toBeUndefined();
    } finally {
      await testDb.db.close();
    }
  }, 120_000);
});
