import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { verifyPassword } from './passwords.js';

/**
 * Where the first admin's generated password is kept: a file in DATA_DIR, readable by the service's user only, rather
 * than in the log stream (which log collectors copy, keep and show to whoever reads logs). It is removed when that
 * password stops working: at the admin's first password change (PATCH /api/admin/users/:id or
 * `alert-webhooks admin reset-password`) made by a process that sees this DATA_DIR.
 */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

export function initialPasswordPath(dataDir: string): string {
  return path.resolve(dataDir, INITIAL_PASSWORD_FILE);
}

/** Writes the password (and a line ending) to `file`, mode 0600 whatever the umask; creates its directory. */
export function writeInitialPassword(file: string, password: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  // Removed first: an older file of another owner or mode is not reused.
  rmSync(file, { force: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
}

/**
 * Called after a user's password changed, with the hash it had before: when the file holds that user's previous
 * password (it verifies against the old hash), the file is removed. Any other user's change leaves it.
 */
export async function forgetInitialPassword(file: string, previousHash: string): Promise<boolean> {
  let kept: string;
  try {
    kept = readFileSync(file, 'utf8').replace(/\n$/, '');
  } catch {
    return false; // none, or not readable here
  }
  if (!(await verifyPassword(kept, previousHash))) return false;
  rmSync(file, { force: true });
  return true;
}
