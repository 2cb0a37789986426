import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database } from '../db/database.js';
import { ADMIN_GROUP_ID } from './groups.js';
import { hashPassword, randomToken } from './passwords.js';
import { countUsers, insertUser } from './users.repo.js';

export interface BootstrapResult {
  created: boolean;
  /** Set only when the password was generated: the caller prints it once. */
  generatedPassword?: string;
}

/**
 * On an empty database, creates user `admin` in Admin. Under an advisory lock, so two processes
 * starting on one empty database create one admin between them.
 */
export async function bootstrapAdmin(db: Database, options: { email: string; password: string | undefined }): Promise<BootstrapResult> {
  // The usual case, a database with users, costs one query and no password hash.
  if ((await countUsers(db)) > 0) return { created: false };
  const generatedPassword = options.password ? undefined : randomToken(15);
  const password = options.password ?? generatedPassword!;
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [AdvisoryLock.bootstrap]);
    if ((await countUsers(tx)) > 0) return { created: false };
    await insertUser(tx, { username: 'admin', email: options.email, passwordHash, groupIds: [ADMIN_GROUP_ID] });
    return generatedPassword ? { created: true, generatedPassword } : { created: true };
  });
}
