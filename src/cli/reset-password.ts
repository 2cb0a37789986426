import { initialPasswordPath } from '../auth/initial-password.js';
import { randomToken } from '../auth/passwords.js';
import { findUserByLogin } from '../auth/users.repo.js';
import { MAX_PASSWORD_LENGTH, updateUser } from '../auth/users.service.js';
import { invalidParameter } from '../errors.js';
import { withAdminDatabase } from './admin-database.js';
import { expectArgs, parseArgs } from './usage.js';
import { OperatorError } from './startup-failures.js';

/**
 * `admin reset-password <username>`: what to do when the generated admin password is lost. Changes the password
 * as PATCH /api/admin/users/:id does (the same rules, and the user's sessions end everywhere). The new password is
 * generated and printed once, or read from stdin when stdin is not a terminal and brings something (a password
 * manager, a secret store: `… | alert-webhooks admin reset-password admin`), so it never sits in the shell history.
 */
export async function resetPassword(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const { positional } = parseArgs(args);
  expectArgs(positional, 1, 1, 'admin reset-password <username>');
  const login = positional[0]!;
  const given = process.stdin.isTTY ? undefined : await readPassword();
  if (given !== undefined && [...given].length > MAX_PASSWORD_LENGTH) throw invalidParameter(`password must be at most ${MAX_PASSWORD_LENGTH} characters long`);
  const password = given ?? randomToken(15);

  await withAdminDatabase('PATCH /api/admin/users/:id with {"password": …}, as an admin', async (db, config) => {
    const user = await findUserByLogin(db, login);
    if (!user) throw new OperatorError(`there is no user "${login}" (give a username or an email address)`);
    await updateUser(db, user.id, { password }, { initialPasswordFile: initialPasswordPath(config.dataDir) });
    print(`The password of ${user.username} (user ${user.id}) was changed; their sessions have ended.`);
    if (given === undefined) print(`New password: ${password}\nIt is shown once: sign in with it and change it.`);
  });
}

/** stdin up to its end, less one line ending; undefined when it brought nothing (</dev/null, a closed pipe). */
async function readPassword(): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
