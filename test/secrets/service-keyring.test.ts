import { statSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProcessConfig } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { decodeSecretsKey, KEY_FILE_NAME, secretsKeyOf } from '../../src/secrets/keyring.js';
import { startService, type Service } from '../../src/service.js';
import { TEST_PG_URL } from '../support/databases.js';
import { runCli, stopCli, TEST_SECRETS_KEY } from '../support/processes.js';
import { ADMIN_PASSWORD, openTestDatabase, secretsKeyEnv, type TestDatabase } from '../support/test-service.js';

const onPostgres = process.env.TEST_DB === 'postgres';

/** The service loads its keyring at start (issue 11): where the key comes from, what is logged, and what stops it. */
describe('the secrets key at start', () => {
  let testDb: TestDatabase;
  const services: Service[] = [];
  beforeAll(async () => {
    testDb = await openTestDatabase();
  });
  afterAll(async () => {
    for (const service of services) await service.close();
    await testDb?.dispose();
  });

  /** The service on this file's database, with its key as the suite gives it; answers it and what it logged. */
  async function start(): Promise<{ service: Service; logLines: Record<string, unknown>[]; logText: string[] }> {
    const logText: string[] = [];
    const config = readProcessConfig({ ADMIN_PASSWORD, ROLE: 'api', ...secretsKeyEnv(testDb) });
    const logger = createLogger('info', { write: (line: string) => void logText.push(line) });
    const service = await startService({ config, logger, db: testDb.db });
    services.push(service);
    return { service, logLines: logText.map((line) => JSON.parse(line) as Record<string, unknown>), logText };
  }
  const keyLine = (lines: Record<string, unknown>[]) => lines.find((line) => line.msg === 'secrets key loaded');

  if (onPostgres) {
    it('PostgreSQL: serve without a key stops at once with one line giving the command to make one', async () => {
      // The suite's PostgreSQL: the key is checked before any connection, so it is never reached either way.
      const run = runCli(['serve'], { DATABASE_URL: TEST_PG_URL, DATA_DIR: '', SECRETS_KEY: '', SECRETS_KEY_FILE: '', ROLE: 'all', HOST: '127.0.0.1', PORT: '0' });
      let finished;
      try {
        await run.waitForOutput(/alert-webhooks: /, 30_000);
        finished = await run.finished;
      } finally {
        await stopCli(run, 'SIGKILL'); // nothing to stop unless it kept running
      }
      expect(finished.code).toBe(1);
      expect(finished.stdout).toBe('');
      expect(finished.stderr).toBe(
        `alert-webhooks: SECRETS_KEY is required with DATABASE_URL: make one with  openssl rand -base64 32  (or node -e "console.log(require('crypto').randomBytes(32).toString('base64'))") and give every process the same value (or SECRETS_KEY_FILE, a file holding it)\n`,
      );
    });

    it('PostgreSQL: uses SECRETS_KEY, logs its id and origin, never the key', async () => {
      const { service, logLines, logText } = await start();
      const expectedId = secretsKeyOf(decodeSecretsKey(TEST_SECRETS_KEY, 'test')).id;
      expect(service.keyring.current.id).toBe(expectedId);
      expect(keyLine(logLines)).toMatchObject({ level: 30, keyId: expectedId, origin: 'SECRETS_KEY' });
      expect(logText.join('\n')).not.toContain(TEST_SECRETS_KEY);
      await service.close();
    });
  } else {
    it('embedded: makes DATA_DIR/secrets.key (0600) on first start and keeps using it after a restart, never logging it', async () => {
      const file = path.join(testDb.dataDir!, KEY_FILE_NAME);
      const first = await start();
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const keyText = readFileSync(file, 'utf8').trim();
      const id = secretsKeyOf(decodeSecretsKey(keyText, file)).id;
      expect(first.service.keyring.current.id).toBe(id);
      expect(keyLine(first.logLines)).toMatchObject({ keyId: id, origin: `${file} (created)` });
      expect(first.logText.join('\n')).not.toContain(keyText);
      await first.service.close();

      const again = await start();
      expect(again.service.keyring.current.id).toBe(id);
      expect(keyLine(again.logLines)).toMatchObject({ keyId: id, origin: file });
      expect(readFileSync(file, 'utf8').trim()).toBe(keyText);
      await again.service.close();
    });
  }
});
