const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A webhook secret from the browser's CSPRNG: 40 characters of 62 (about 238 bits), above the API's 16-character
 * floor. Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
 */
export function generateSecret(length = 40): string {
  const out: string[] = [];
  const limit = 256 - (256 % ALPHABET.length);
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < limit && out.length < length) out.push(ALPHABET[byte % ALPHABET.length]!);
    }
  }
  return out.join('');
}
