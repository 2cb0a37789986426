import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { errorCode } from '../errors.js';

/** One AES-256 key and its id: the first 8 hex digits of the SHA-256 of its 32 bytes. */
export interface SecretsKey {
  readonly id: string;
  /** A KeyObject rather than a Buffer: logging it (or the keyring) prints no key material. */
  readonly key: KeyObject;
}

/** The key that seals, and an older one that may still open what it sealed (during a `rekey`). */
export interface Keyring {
  readonly current: SecretsKey;
  readonly previous: SecretsKey | undefined;
}

/** A key that is missing, unreadable or not 32 bytes: the operator's to fix. The message never holds key material. */
export class SecretsKeyError extends Error {
  override name = 'SecretsKeyError';
}

export const SECRETS_KEY_BYTES = 32;
export const KEY_FILE_NAME = 'secrets.key';
const MAKE_ONE = `make one with  openssl rand -base64 32  (or node -e "console.log(require('crypto').randomBytes(32).toString('base64'))")`;

export function secretsKeyOf(key: KeyObject): SecretsKey {
  return { id: createHash('sha256').update(key.export()).digest('hex').slice(0, 8), key };
}

export function keyringOf(current: KeyObject, previous?: KeyObject): Keyring {
  const currentKey = secretsKeyOf(current);
  const previousKey = previous === undefined ? undefined : secretsKeyOf(previous);
  return { current: currentKey, previous: previousKey?.id === currentKey.id ? undefined : previousKey };
}

/**
 * The key written as base64 (or base64url) of exactly 32 bytes, as `openssl rand -base64 32` makes it. `name` says
 * where it came from (`SECRETS_KEY`, `SECRETS_KEY_FILE (/run/secrets/key)`) for the message, which tells what is
 * wrong (not base64, how many bytes) and never the value.
 */
export function decodeSecretsKey(text: string, name: string): KeyObject {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new SecretsKeyError(`${name} must be base64 of ${SECRETS_KEY_BYTES} bytes, and is not base64: ${MAKE_ONE}`);
  const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== SECRETS_KEY_BYTES) {
    throw new SecretsKeyError(`${name} must be base64 of ${SECRETS_KEY_BYTES} bytes, and is ${bytes.length} bytes: ${MAKE_ONE}`);
  }
  const key = createSecretKey(bytes);
  bytes.fill(0);
  return key;
}

export interface KeyringSource {
  databaseKind: 'pglite' | 'postgres';
  /** The embedded database's directory: its key file is `<dataDir>/secrets.key`. */
  dataDir: string;
  /** SECRETS_KEY, decoded (see decodeSecretsKey). */
  secretsKey?: KeyObject | undefined;
  /** SECRETS_KEY_FILE: a file holding the key as SECRETS_KEY would. */
  secretsKeyFile?: string | undefined;
  /** SECRETS_KEY_PREVIOUS, decoded: opens what the key before SECRETS_KEY sealed. */
  secretsKeyPrevious?: KeyObject | undefined;
}

export interface LoadedKeyring {
  keyring: Keyring;
  /** Where the current key came from, for the start-up log: `SECRETS_KEY`, a file's path, `(created)`. */
  origin: string;
  /** Worth a warning in the log (a key file others can read), never fatal. */
  warnings: string[];
}

/**
 * The keyring of this process, at start. SECRETS_KEY, else SECRETS_KEY_FILE, is the current key with either
 * database. Without them, the embedded database uses `DATA_DIR/secrets.key`, made on first start (mode 0600); on
 * PostgreSQL there is no such fallback, since every process must seal and open with the same key and a file on one
 * host's disk is not shared: the error says how to make a key.
 *
 * A key file readable by group or others is used with a warning rather than refused: a key mounted by Kubernetes
 * or restored from a backup often is, and refusing would stop a service that was running.
 */
export async function loadKeyring(source: KeyringSource): Promise<LoadedKeyring> {
  const warnings: string[] = [];
  let current: KeyObject;
  let origin: string;
  if (source.secretsKey !== undefined) {
    current = source.secretsKey;
    origin = 'SECRETS_KEY';
  } else if (source.secretsKeyFile !== undefined) {
    current = await readKeyFile(source.secretsKeyFile, `SECRETS_KEY_FILE (${source.secretsKeyFile})`, warnings);
    origin = source.secretsKeyFile;
  } else if (source.databaseKind === 'postgres') {
    throw new SecretsKeyError(`SECRETS_KEY is required with DATABASE_URL: ${MAKE_ONE} and give every process the same value (or SECRETS_KEY_FILE, a file holding it)`);
  } else {
    ({ key: current, origin } = await embeddedKey(source.dataDir, warnings));
  }
  return { keyring: keyringOf(current, source.secretsKeyPrevious), origin, warnings };
}

/** `<dataDir>/secrets.key`, made the first time. */
async function embeddedKey(dataDir: string, warnings: string[]): Promise<{ key: KeyObject; origin: string }> {
  const file = path.join(dataDir, KEY_FILE_NAME);
  try {
    return { key: await readKeyFile(file, file, warnings), origin: file };
  } catch (err) {
    if (errorCode((err as { cause?: unknown }).cause) !== 'ENOENT') throw err;
  }
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const created = await createKeyFile(file);
  if (!created) return { key: await readKeyFile(file, file, warnings), origin: file }; // made by another process meanwhile
  return { key: decodeSecretsKey(created, file), origin: `${file} (created)` };
}

/**
 * Writes a new key to `file` whole or not at all: into a temporary file (0600 from its creation, so the key is
 * never readable by others even for a moment), synced, then hard-linked to its name, which fails rather than
 * replaces when the name exists. A crash leaves no half-written key under the name. Returns the key text, or
 * undefined when `file` appeared meanwhile.
 */
async function createKeyFile(file: string): Promise<string | undefined> {
  const text = `${randomBytes(SECRETS_KEY_BYTES).toString('base64')}\n`;
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.link(temporary, file);
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return undefined;
    throw err;
  } finally {
    await fs.unlink(temporary).catch(() => undefined);
  }
  await syncDirectory(path.dirname(file));
  return text;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY).catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync();
  } catch {
    // Some file systems cannot sync a directory; the key is synced, only its name might be lost in a power cut.
  } finally {
    await handle.close();
  }
}

async function readKeyFile(file: string, name: string, warnings: string[]): Promise<KeyObject> {
  let text: string;
  let mode: number;
  try {
    text = await fs.readFile(file, 'utf8');
    mode = (await fs.stat(file)).mode;
  } catch (err) {
    throw new SecretsKeyError(`${name} cannot be read: ${errorCode(err) ?? (err as Error).message}`, { cause: err });
  }
  if ((mode & 0o077) !== 0) {
    warnings.push(`${name} can be read by users other than its owner (mode ${(mode & 0o777).toString(8)}): chmod 600 it`);
  }
  return decodeSecretsKey(text, name);
}
