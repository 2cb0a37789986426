import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database } from '../db/database.js';
import { AppError, invalidParameter, notFound, uniqueViolationAs } from '../errors.js';
import { ADMIN_GROUP_ID, ANALYST_GROUP_ID } from './groups.js';
import { forgetInitialPassword } from './initial-password.js';
import { checkGroupChanges, checkGroupIds, logMembership, membershipChange, resolveGroupChanges, toGroup, type GroupChanges, type MembershipContext } from './membership.js';
import { hashPassword } from './passwords.js';
import type { User } from './schemas.js';
import * as repo from './users.repo.js';

export type { User } from './schemas.js';

export function toUser(row: repo.UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    groups: row.groups.map(toGroup),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const MIN_PASSWORD_LENGTH = 8;
/** Checked by the route schemas (sign-in, create, change), so an arbitrarily long password never reaches the hashing. */
export const MAX_PASSWORD_LENGTH = 1024;
export const MAX_USERNAME_LENGTH = 100;
/** `a@b`: the shortest text the EMAIL rule takes. */
export const MIN_EMAIL_LENGTH = 3;
/** The longest address SMTP carries (RFC 5321's 256-octet path, less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const USERNAME = new RegExp(`^[^\\s@][^\\s]{0,${MAX_USERNAME_LENGTH - 1}}$`);

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw invalidParameter(`password must be at least ${MIN_PASSWORD_LENGTH} characters long`, 'password');
}

// Characters that show as nothing or change the direction of what follows: `admin\u200b` and `admin\u202e` looked
// like `admin` in every list. Control, format (zero-width, bidi), private-use, unassigned, line and paragraph
// separators, and the default-ignorable ones (U+3164 Hangul filler and the like).
export const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/**
 * A username as stored and looked up: NFKC, so `ａdmin` (fullwidth) and `admin` are one name and the second is
 * refused as taken.
 */
export function normaliseUsername(username: string): string {
  return username.normalize('NFKC');
}

/**
 * Checks a (normalised) username of the user whose email is `ownEmail`. One with `@` is refused unless it is that
 * email: a user named `boss@example.com` would be taken for whoever signs in with that address.
 */
function checkUsername(username: string, ownEmail: string): void {
  if (!USERNAME.test(username)) {
    throw invalidParameter(`username must be 1 to ${MAX_USERNAME_LENGTH} characters, without spaces, and must not start with @`, 'username');
  }
  if (INVISIBLE.test(username)) {
    throw invalidParameter('username must not contain invisible, control or text-direction characters (such as U+200B or U+202E)');
  }
  if (username.includes('@') && username.toLowerCase() !== ownEmail.toLowerCase()) {
    throw invalidParameter("username must not contain @ unless it is the user's own email: a username shaped like another address could be taken for its owner");
  }
}

function checkEmail(email: string): void {
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) throw invalidParameter(`email "${email}" is not an email address (name@domain)`, 'email');
}

export interface NewUser {
  username: string;
  email: string;
  password: string;
  groups?: number[] | undefined;
}

/** `context`: who creates the user, and the audit log their joining each group is recorded in. */
export async function createUser(db: Database, input: NewUser, context: MembershipContext = {}): Promise<User> {
  const username = normaliseUsername(input.username);
  checkUsername(username, input.email);
  checkEmail(input.email);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    const id = await db.transaction(async (tx) => {
      const groups = await checkGroupIds(tx, input.groups ?? [ANALYST_GROUP_ID], 'groups');
      const id = await repo.insertUser(tx, { username, email: input.email, passwordHash, groupIds: groups.map((group) => group.id) });
      await logMembership(tx, context, membershipChange({ kind: 'user', id, name: username }, [], groups));
      return id;
    });
    return toUser((await repo.findUserById(db, id))!);
  } catch (err) {
    throw uniqueViolationAs(err, repo.USER_UNIQUE_CONSTRAINTS);
  }
}

export interface UserChanges extends GroupChanges {
  username?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
}

/**
 * `initialPasswordFile`: where this process keeps the first admin's generated password (auth/initial-password.ts),
 * removed when the password it holds is the one this change replaces. The groups are the whole set (`groups`) or
 * LKE's `addedGroups` and `removedGroups`.
 */
export async function updateUser(
  db: Database,
  id: number,
  changes: UserChanges,
  options: { initialPasswordFile?: string } & MembershipContext = {},
): Promise<User> {
  const username = changes.username === undefined ? undefined : normaliseUsername(changes.username);
  if (changes.email !== undefined) checkEmail(changes.email);
  if (changes.password !== undefined) checkPassword(changes.password);
  checkGroupChanges(changes);
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
  let previousHash: string | undefined;
  try {
    await db.transaction(async (tx) => {
      // Held to the end: a concurrent change of this user's groups starts from what this one leaves.
      if (!(await repo.lockUser(tx, id))) throw notFound('user', id);
      const current = (await repo.findUserById(tx, id))!;
      previousHash = current.password_hash;
      // The name as it will be, against the email as it will be: a new email must not leave the old one as the name.
      if (username !== undefined || changes.email !== undefined) checkUsername(username ?? current.username, changes.email ?? current.email);
      const groups = await resolveGroupChanges(tx, current.group_ids, changes);
      if (groups && !groups.some((group) => group.id === ADMIN_GROUP_ID)) await ensureAnotherAdmin(tx, id);
      await repo.updateUser(tx, id, { username, email: changes.email, passwordHash });
      if (groups) {
        await repo.setUserGroups(tx, id, groups.map((group) => group.id));
        await logMembership(tx, options, membershipChange({ kind: 'user', id, name: username ?? current.username }, current.groups, groups));
      }
      // A changed password ends the user's sessions everywhere.
      if (passwordHash) await tx.query('DELETE FROM sessions WHERE user_id = $1', [id]);
    });
  } catch (err) {
    throw uniqueViolationAs(err, repo.USER_UNIQUE_CONSTRAINTS);
  }
  if (passwordHash && previousHash && options.initialPasswordFile) await forgetInitialPassword(options.initialPasswordFile, previousHash);
  return toUser((await repo.findUserById(db, id))!);
}

/** The user leaves every group with it: recorded, as any membership change, in `context`'s log. */
export async function deleteUser(db: Database, id: number, context: MembershipContext = {}): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await repo.lockUser(tx, id))) throw notFound('user', id);
    await ensureAnotherAdmin(tx, id);
    const user = (await repo.findUserById(tx, id))!;
    await repo.deleteUser(tx, id);
    await logMembership(tx, context, membershipChange({ kind: 'user', id, name: user.username }, user.groups, []));
  });
}

/** The service must keep one admin, or nobody could administer it again. */
async function ensureAnotherAdmin(tx: Parameters<typeof repo.countAdminsOtherThan>[0], userId: number): Promise<void> {
  // Serialise admin removals so two concurrent ones cannot each see the other as the remaining admin.
  await tx.query('SELECT pg_advisory_xact_lock($1)', [AdvisoryLock.adminRemoval]);
  const row = await repo.findUserById(tx, userId);
  if (row?.group_ids.includes(ADMIN_GROUP_ID) && (await repo.countAdminsOtherThan(tx, userId)) === 0) {
    throw new AppError('invalid_parameter', `user ${userId} is the last member of the Admin group: make another user Admin first`);
  }
}

export async function listUsers(db: Database): Promise<User[]> {
  return (await repo.listUsers(db)).map(toUser);
}
