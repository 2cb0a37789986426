import { createSecretKey, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { keyringOf } from '../../src/secrets/keyring.js';
import { isSealed, needsResealing, openSecret, sealedKeyId, sealSecret, SealedSecretError } from '../../src/secrets/secret-box.js';

const newKey = () => createSecretKey(randomBytes(32));
const SECRET = 'whsec-recognisable-Zebra-7781-ünïcødé';

/** The error `fn` throws (fails the test when it does not throw). */
function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not throw');
}

describe('sealed secrets', () => {
  it('open to what was sealed, as self-describing text naming the key, and never the same text twice', () => {
    const keyring = keyringOf(newKey());
    const sealed = sealSecret(SECRET, keyring);
    expect(sealed).toMatch(new RegExp(`^v1:${keyring.current.id}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('Zebra');
    expect(isSealed(sealed)).toBe(true);
    expect(sealedKeyId(sealed)).toBe(keyring.current.id);
    expect(openSecret(sealed, keyring)).toBe(SECRET);
    expect(sealSecret(SECRET, keyring)).not.toBe(sealed); // a fresh IV each time
    expect(openSecret(sealSecret('', keyring), keyring)).toBe('');
    expect(openSecret(sealSecret('x'.repeat(1024), keyring), keyring)).toBe('x'.repeat(1024));
  });

  it('names a key by the first 8 hex digits of the SHA-256 of its bytes', () => {
    const bytes = Buffer.alloc(32, 7);
    // head -c 32 /dev/zero | tr '\0' '\7' | sha256sum | cut -c1-8
    expect(keyringOf(createSecretKey(bytes)).current.id).toBe('4bb06f8e');
  });

  it('detects any changed byte, in the body, the IV or the key id', () => {
    const keyring = keyringOf(newKey());
    const sealed = sealSecret(SECRET, keyring);
    const [version, id, iv, body] = sealed.split(':') as [string, string, string, string];
    const flipped = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at]! ^= 0x01;
      return bytes.toString('base64url');
    };
    const altered = [
      [version, id, iv, flipped(body, 0)], // first byte of the ciphertext
      [version, id, iv, flipped(body, Buffer.from(body, 'base64url').length - 1)], // last byte of the tag
      [version, id, flipped(iv, 5), body],
      [version, id, iv, body.slice(0, -4)], // cut short
    ].map((parts) => parts.join(':'));
    for (const text of altered) {
      const error = errorOf(() => openSecret(text, keyring));
      expect(error, text).toBeInstanceOf(SealedSecretError);
      expect(error.message).toMatch(/does not open: it was altered|cut short/);
    }
    // a different key id is refused as a key this process does not have
    const otherId = id === '00000000' ? '11111111' : '00000000';
    expect(errorOf(() => openSecret([version, otherId, iv, body].join(':'), keyring)).message).toMatch(/sealed under key 0{8}|1{8}/);
  });

  it('refuses to open under the wrong key, saying which keys it has and which it needed, never the secret', () => {
    const sealed = sealSecret(SECRET, keyringOf(newKey()));
    const other = keyringOf(newKey(), newKey());
    const error = errorOf(() => openSecret(sealed, other));
    expect(error).toBeInstanceOf(SealedSecretError);
    expect(error.message).toBe(
      `a secret is sealed under key ${sealedKeyId(sealed)}, which this process does not have: the current key is ${other.current.id} and SECRETS_KEY_PREVIOUS is key ${other.previous!.id}`,
    );
    expect(errorOf(() => openSecret(sealed, keyringOf(newKey()))).message).toMatch(/and SECRETS_KEY_PREVIOUS is unset$/);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain(sealed.split(':')[3]);
  });

  it('opens what the previous key sealed, and seals anew under the current key only', () => {
    const oldKey = newKey();
    const old = keyringOf(oldKey);
    const sealedBefore = sealSecret(SECRET, old);
    const rotated = keyringOf(newKey(), oldKey);
    expect(rotated.previous?.id).toBe(old.current.id);
    expect(openSecret(sealedBefore, rotated)).toBe(SECRET);
    expect(needsResealing(sealedBefore, rotated)).toBe(true);
    const resealed = sealSecret(openSecret(sealedBefore, rotated), rotated);
    expect(sealedKeyId(resealed)).toBe(rotated.current.id);
    expect(needsResealing(resealed, rotated)).toBe(false);
    // the old key alone cannot open what the new one sealed
    expect(() => openSecret(resealed, old)).toThrow(SealedSecretError);
  });

  it('tells sealed text from anything else', () => {
    for (const text of ['', SECRET, 'v1:abc:def:ghi', 'v2:0123abcd:AAAAAAAAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAA', 'v1:0123ABCD:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAA']) {
      expect(isSealed(text), text).toBe(false);
      expect(() => openSecret(text, keyringOf(newKey())), text).toThrow(/^not a sealed secret/);
    }
  });

  it('prints no key material when a keyring is logged', () => {
    const bytes = randomBytes(32);
    const keyring = keyringOf(createSecretKey(bytes));
    const shown = `${inspect(keyring, { depth: 10, showHidden: true })} ${JSON.stringify(keyring)}`;
    expect(shown).not.toContain(bytes.toString('base64'));
    expect(shown).not.toContain(bytes.toString('hex'));
  });
});
