import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database } from '../db/database.js';
import { AppError, invalidParameter, notFound, uniqueViolationAs } from '../errors.js';
import { ADMIN_GROUP_ID, ANALYST_GROUP_ID, groupsOf, isKnownGroup, type Group } from './groups.js';
import { forgetInitialPassword } from './initial-password.js';
import { hashPassword } from './passwords.js';
import * as repo from './users.repo.js';

/** A user as the API shows it: never a password or its hash. */
export interface User {
  id: number;
  username: string;
  email: string;
  groups: Group[];
  createdAt: string;
  updatedAt: string;
}

export function toUser(row: repo.UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    groups: groupsOf(row.group_ids),
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
  if (password.length < MIN_PASSWORD_LENGTH) throw invalidParameter(`password must be at least ${MIN_PASSWORD_LENGTH} characters long`);
}

function checkUsername(username: string): void {
  if (!USERNAME.test(username)) {
    throw invalidParameter(`username must be 1 to ${MAX_USERNAME_LENGTH} characters, without spaces, and must not start with @`);
  }
}

function checkEmail(email: string): void {
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) throw invalidParameter(`email "${email}" is not an email address (name@domain)`);
}

export function checkGroups(groups: number[], field = 'groups'): number[] {
  if (groups.length === 0) throw invalidParameter(`${field} must name at least one group`);
  for (const id of groups) {
    if (!isKnownGroup(id)) throw invalidParameter(`${field} contains ${id}, which is not a group (1 = Admin, 2 = Analyst)`);
  }
  return [...new Set(groups)];
}

export interface NewUser {
  username: string;
  email: string;
  password: string;
  groups?: number[] | undefined;
}

export async function createUser(db: Database, input: NewUser): Promise<User> {
  checkUsername(input.username);
  checkEmail(input.email);
  checkPassword(input.password);
  const groupIds = checkGroups(input.groups ?? [ANALYST_GROUP_ID]);
  const passwordHash = await hashPassword(input.password);
  try {
    const id = await db.transaction((tx) => repo.insertUser(tx, { username: input.username, email: input.email, passwordHash, groupIds }));
    return toUser((await repo.findUserById(db, id))!);
  } catch (err) {
    throw uniqueViolationAs(err, repo.USER_UNIQUE_CONSTRAINTS);
  }
}

export interface UserChanges {
  username?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
  groups?: number[] | undefined;
}

/**
 * `initialPasswordFile`: where this process keeps the first admin's generated password (auth/initial-password.ts),
 * removed when the password it holds is the one this change replaces.
 */
export async function updateUser(db: Database, id: number, changes: UserChanges, options: { initialPasswordFile?: string } = {}): Promise<User> {
  if (changes.username !== undefined) checkUsername(changes.username);
  if (changes.email !== undefined) checkEmail(changes.email);
  if (changes.password !== undefined) checkPassword(changes.password);
  const groupIds = changes.groups === undefined ? undefined : checkGroups(changes.groups);
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
  let previousHash: string | undefined;
  try {
    await db.transaction(async (tx) => {
      const previous = await repo.findUserById(tx, id);
      if (!previous) throw notFound('user', id);
      previousHash = previous.password_hash;
      if (groupIds && !groupIds.includes(ADMIN_GROUP_ID)) await ensureAnotherAdmin(tx, id);
      await repo.updateUser(tx, id, { username: changes.username, email: changes.email, passwordHash });
      if (groupIds) await repo.setUserGroups(tx, id, groupIds);
      // A changed password ends the user's sessions everywhere.
      if (passwordHash) await tx.query('DELETE FROM sessions WHERE user_id = $1', [id]);
    });
  } catch (err) {
    throw uniqueViolationAs(err, repo.USER_UNIQUE_CONSTRAINTS);
  }
  if (passwordHash && previousHash && options.initialPasswordFile) await forgetInitialPassword(options.initialPasswordFile, previousHash);
  return toUser((await repo.findUserById(db, id))!);
}

export async function deleteUser(db: Database, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await repo.findUserById(tx, id))) throw notFound('user', id);
    await ensureAnotherAdmin(tx, id);
    await repo.deleteUser(tx, id);
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
