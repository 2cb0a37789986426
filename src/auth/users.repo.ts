import type { Queryable } from '../db/database.js';
import { ADMIN_GROUP_ID } from './groups.js';
import { memberGroupsJson, type GroupRow } from './membership.js';

export interface UserRow {
  id: number;
  username: string;
  email: string;
  password_hash: string;
  group_ids: number[];
  /** The same groups, as the answers show them. */
  groups: GroupRow[];
  created_at: Date;
  updated_at: Date;
}

const SELECT_USER = `
  SELECT u.id, u.username, u.email, u.password_hash, u.created_at, u.updated_at,
         COALESCE((SELECT array_agg(g.group_id ORDER BY g.group_id) FROM user_groups g WHERE g.user_id = u.id), '{}') AS group_ids,
         ${memberGroupsJson('user_groups', 'user_id', 'u.id')} AS groups
  FROM users u`;

export async function findUserById(db: Queryable, id: number): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`${SELECT_USER} WHERE u.id = $1`, [id]);
  return rows[0];
}

/** Sign-in accepts the username or the email, without regard to case. */
/**
 * The user a sign-in names: by email when the login is shaped like one, else by username (NFKC, as stored). An email
 * wins over a username: a username shaped like an email is refused unless it is its user's own (users.service.ts),
 * but one from before that rule must not shadow the address's owner.
 */
export async function findUserByLogin(db: Queryable, usernameOrEmail: string): Promise<UserRow | undefined> {
  const login = usernameOrEmail.normalize('NFKC');
  const { rows } = await db.query<UserRow>(
    `${SELECT_USER} WHERE lower(u.username) = lower($1) OR lower(u.email) = lower($2) ORDER BY (lower(u.email) = lower($2)) DESC LIMIT 1`,
    [login, usernameOrEmail],
  );
  return rows[0];
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`${SELECT_USER} WHERE lower(u.email) = lower($1)`, [email]);
  return rows[0];
}

/** Holds the user's row until the transaction ends: two changes of one user's groups apply one after the other. */
export async function lockUser(tx: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [id]);
  return rowCount > 0;
}

export async function listUsers(db: Queryable): Promise<UserRow[]> {
  const { rows } = await db.query<UserRow>(`${SELECT_USER} ORDER BY u.id`);
  return rows;
}

export async function countUsers(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*) AS count FROM users');
  return rows[0]?.count ?? 0;
}

export async function insertUser(
  db: Queryable,
  user: { username: string; email: string; passwordHash: string; groupIds: number[] },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO users (username, email, password_hash) VALUES ($1, $2, $3) RETURNING id',
    [user.username, user.email, user.passwordHash],
  );
  const id = rows[0]!.id;
  await setUserGroups(db, id, user.groupIds);
  return id;
}

export async function updateUser(
  db: Queryable,
  id: number,
  changes: { username?: string | undefined; email?: string | undefined; passwordHash?: string | undefined },
): Promise<void> {
  await db.query(
    `UPDATE users SET username = COALESCE($2, username), email = COALESCE($3, email),
       password_hash = COALESCE($4, password_hash), updated_at = now() WHERE id = $1`,
    [id, changes.username ?? null, changes.email ?? null, changes.passwordHash ?? null],
  );
}

export async function setUserGroups(db: Queryable, userId: number, groupIds: number[]): Promise<void> {
  await db.query('DELETE FROM user_groups WHERE user_id = $1', [userId]);
  await db.query('INSERT INTO user_groups (user_id, group_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING', [userId, groupIds]);
}

export async function deleteUser(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM users WHERE id = $1', [id]);
  return rowCount > 0;
}

export async function countAdminsOtherThan(db: Queryable, userId: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    'SELECT count(*) AS count FROM user_groups WHERE group_id = $2 AND user_id <> $1',
    [userId, ADMIN_GROUP_ID],
  );
  return rows[0]?.count ?? 0;
}

export const USER_UNIQUE_CONSTRAINTS = {
  users_username_key: 'username is already taken by another user',
  users_email_key: 'email is already used by another user',
};
