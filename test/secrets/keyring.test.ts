import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, readProcessConfig } from '../../src/env.js';
import { decodeSecretsKey, loadKeyring, SecretsKeyError } from '../../src/secrets/keyring.js';
import { openSecret, sealSecret } from '../../src/secrets/secret-box.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(tmpdir(), 'alert-webhooks-keyring-'));
  dirs.push(dir);
  return dir;
}

const base64Key = () => randomBytes(32).toString('base64');

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not reject');
}

describe('the embedded database key file', () => {
  it('is created on first start as DATA_DIR/secrets.key, mode 0600, and reused after', async () => {
    const dataDir = path.join(await tempDir(), 'data'); // not there yet: made too
    const first = await loadKeyring({ databaseKind: 'pglite', dataDir });
    const file = path.join(dataDir, 'secrets.key');
    expect(first.origin).toBe(`${file} (created)`);
    expect(first.warnings).toEqual([]);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
    expect((await fs.readdir(dataDir)).sort()).toEqual(['secrets.key']); // no temporary file left behind

    const sealed = sealSecret('kept across restarts', first.keyring);
    const second = await loadKeyring({ databaseKind: 'pglite', dataDir });
    expect(second.origin).toBe(file);
    expect(second.keyring.current.id).toBe(first.keyring.current.id);
    expect(openSecret(sealed, second.keyring)).toBe('kept across restarts');
  });

  it('is made once when two starts race for it', async () => {
    const dataDir = await tempDir();
    const loaded = await Promise.all([1, 2, 3, 4].map(() => loadKeyring({ databaseKind: 'pglite', dataDir })));
    expect(new Set(loaded.map((l) => l.keyring.current.id)).size).toBe(1);
    expect(loaded.filter((l) => l.origin.endsWith('(created)'))).toHaveLength(1);
  });

  it('is used with a warning when others can read it', async () => {
    const dataDir = await tempDir();
    await fs.writeFile(path.join(dataDir, 'secrets.key'), `${base64Key()}\n`, { mode: 0o644 });
    await fs.chmod(path.join(dataDir, 'secrets.key'), 0o644);
    const { warnings } = await loadKeyring({ databaseKind: 'pglite', dataDir });
    expect(warnings).toEqual([`${path.join(dataDir, 'secrets.key')} can be read by users other than its owner (mode 644): chmod 600 it`]);
  });

  it('is refused when it does not hold a key, without printing what it holds', async () => {
    const dataDir = await tempDir();
    await fs.writeFile(path.join(dataDir, 'secrets.key'), 'c2hvcnQ=', { mode: 0o600 });
    const error = await rejection(loadKeyring({ databaseKind: 'pglite', dataDir }));
    expect(error).toBeInstanceOf(SecretsKeyError);
    expect(error.message).toMatch(/^\S+secrets\.key must be base64 of 32 bytes, and is 5 bytes: make one with {2}openssl rand -base64 32 /);
    expect(error.message).not.toContain('c2hvcnQ');
  });

  it('is not made or used when SECRETS_KEY is given', async () => {
    const dataDir = await tempDir();
    const config = readProcessConfig({ SECRETS_KEY: base64Key(), DATA_DIR: dataDir });
    const loaded = await loadKeyring({ databaseKind: 'pglite', ...config });
    expect(loaded.origin).toBe('SECRETS_KEY');
    expect(await fs.readdir(dataDir)).toEqual([]);
  });
});

describe('the PostgreSQL key', () => {
  it('is required: without it, one line that says how to make one', async () => {
    const error = await rejection(loadKeyring({ databaseKind: 'postgres', dataDir: await tempDir() }));
    expect(error).toBeInstanceOf(SecretsKeyError);
    expect(error.message).toBe(
      `SECRETS_KEY is required with DATABASE_URL: make one with  openssl rand -base64 32  (or node -e "console.log(require('crypto').randomBytes(32).toString('base64'))") and give every process the same value (or SECRETS_KEY_FILE, a file holding it)`,
    );
    expect(error.message).not.toContain('\n');
  });

  it('comes from SECRETS_KEY, or from the file SECRETS_KEY_FILE names', async () => {
    const key = base64Key();
    const fromEnv = await loadKeyring({ databaseKind: 'postgres', ...readProcessConfig({ SECRETS_KEY: key }) });
    const dir = await tempDir();
    const file = path.join(dir, 'key');
    await fs.writeFile(file, `${key}\n`, { mode: 0o400 });
    const fromFile = await loadKeyring({ databaseKind: 'postgres', ...readProcessConfig({ SECRETS_KEY_FILE: file }) });
    expect(fromFile.origin).toBe(file);
    expect(fromFile.keyring.current.id).toBe(fromEnv.keyring.current.id);
    const missing = await rejection(loadKeyring({ databaseKind: 'postgres', dataDir: dir, secretsKeyFile: path.join(dir, 'absent') }));
    expect(missing.message).toBe(`SECRETS_KEY_FILE (${path.join(dir, 'absent')}) cannot be read: ENOENT`);
  });

  it('reads with SECRETS_KEY_PREVIOUS what the previous key sealed, and seals with SECRETS_KEY', async () => {
    const oldKey = base64Key();
    const newKey = base64Key();
    const before = await loadKeyring({ databaseKind: 'postgres', ...readProcessConfig({ SECRETS_KEY: oldKey }) });
    const sealedBefore = sealSecret('signed-with-this', before.keyring);
    const during = await loadKeyring({ databaseKind: 'postgres', ...readProcessConfig({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey }) });
    expect(during.keyring.previous?.id).toBe(before.keyring.current.id);
    expect(openSecret(sealedBefore, during.keyring)).toBe('signed-with-this');
    expect(sealSecret('new', during.keyring).split(':')[1]).toBe(during.keyring.current.id);
  });
});

describe('key settings in the environment', () => {
  it('refuse a key that is not base64 of 32 bytes, naming the variable and never the value', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ SECRETS_KEY: randomBytes(16).toString('base64') }, /^SECRETS_KEY must be base64 of 32 bytes, and is 16 bytes: make one with/],
      [{ SECRETS_KEY: randomBytes(33).toString('base64') }, /^SECRETS_KEY must be base64 of 32 bytes, and is 33 bytes/],
      [{ SECRETS_KEY: 'not base64 at all!' }, /^SECRETS_KEY must be base64 of 32 bytes, and is not base64/],
      [{ SECRETS_KEY: base64Key(), SECRETS_KEY_PREVIOUS: 'c2hvcnQ=' }, /^SECRETS_KEY_PREVIOUS must be base64 of 32 bytes, and is 5 bytes/],
      [{ SECRETS_KEY: base64Key(), SECRETS_KEY_FILE: '/run/secrets/key' }, /^SECRETS_KEY and SECRETS_KEY_FILE are both set/],
    ];
    for (const [env, message] of bad) {
      const error = (() => {
        try {
          readProcessConfig(env);
        } catch (err) {
          return err as Error;
        }
        throw new Error(`accepted ${Object.keys(env).join(', ')}`);
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toMatch(message);
      for (const value of Object.values(env)) if (value.length > 8) expect(error.message).not.toContain(value);
    }
  });

  it('take base64url too, and hold the key as a KeyObject that prints nothing', () => {
    const bytes = randomBytes(32);
    const config = readProcessConfig({ SECRETS_KEY: bytes.toString('base64url') });
    expect(config.secretsKey?.export().equals(bytes)).toBe(true);
    expect(JSON.stringify(config)).not.toContain(bytes.toString('base64url'));
    expect(decodeSecretsKey(`  ${bytes.toString('base64')}\n`, 'SECRETS_KEY').symmetricKeySize).toBe(32);
  });

  it('are all unset by default', () => {
    const config = readProcessConfig({});
    expect([config.secretsKey, config.secretsKeyFile, config.secretsKeyPrevious]).toEqual([undefined, undefined, undefined]);
  });
});
