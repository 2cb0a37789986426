import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring, SecretsKey } from './keyring.js';

/**
 * Secrets at rest: AES-256-GCM under a key the database does not hold, written as self-describing text
 *
 *   v1:<key id>:<base64url 12-byte IV>:<base64url ciphertext and 16-byte tag>
 *
 * so a sealed value says which key opens it (keys can be rotated, see `rekey`) and fits a text column. The
 * `v1:<key id>` prefix is authenticated too (GCM additional data): changing it fails the open, like changing any
 * other byte. A fresh random IV per seal: 2^32 seals under one key keep the chance of an IV repeating below 2^-32,
 * far beyond the number of webhook secrets an installation has.
 */
const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED = /^v1:([0-9a-f]{8}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22,})$/;

/** A sealed value that cannot be opened. The message names key ids only, never a key or the secret. */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

export function sealSecret(plain: string, keyring: Keyring): string {
  const { id, key } = keyring.current;
  const header = `${VERSION}:${id}`;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(header, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${header}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
}

/** Whether `text` has the form sealSecret writes (not whether it opens). */
export function isSealed(text: string): boolean {
  return SEALED.test(text);
}

/** The id of the key `sealed` was sealed under, or undefined when it is not sealed text. */
export function sealedKeyId(sealed: string): string | undefined {
  return SEALED.exec(sealed)?.[1];
}

/** Whether `sealed` is under another key than the current one: what `rekey` seals again. */
export function needsResealing(sealed: string, keyring: Keyring): boolean {
  return sealedKeyId(sealed) !== keyring.current.id;
}

/** The secret, with the key its id names: the current key, or the previous one. */
export function openSecret(sealed: string, keyring: Keyring): string {
  const match = SEALED.exec(sealed);
  if (match === null) throw new SealedSecretError(`not a sealed secret (expected ${VERSION}:<key id>:<iv>:<ciphertext>)`);
  const [, id, ivText, bodyText] = match as unknown as [string, string, string, string];
  const key = keyFor(id, keyring);
  const body = Buffer.from(bodyText, 'base64url');
  if (body.length < TAG_BYTES) throw new SealedSecretError(`a secret sealed under key ${id} is cut short`);
  try {
    const decipher = createDecipheriv(ALGORITHM, key.key, Buffer.from(ivText, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${VERSION}:${id}`, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    // Node's own message ("Unsupported state or unable to authenticate data") says less than this.
    throw new SealedSecretError(`a secret sealed under key ${id} does not open: it was altered, or the key given with that id is not the one that sealed it`);
  }
}

function keyFor(id: string, keyring: Keyring): SecretsKey {
  if (keyring.current.id === id) return keyring.current;
  if (keyring.previous?.id === id) return keyring.previous;
  const previous = keyring.previous === undefined ? 'SECRETS_KEY_PREVIOUS is unset' : `SECRETS_KEY_PREVIOUS is key ${keyring.previous.id}`;
  throw new SealedSecretError(`a secret is sealed under key ${id}, which this process does not have: the current key is ${keyring.current.id} and ${previous}`);
}
