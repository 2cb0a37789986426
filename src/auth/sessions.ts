import type { Queryable } from '../db/database.js';
import { randomToken, sha256Hex } from './passwords.js';

export const SESSION_COOKIE = 'aw.sid';

/** Starts a session and returns the token for the cookie; only its hash is stored. */
export async function createSession(db: Queryable, userId: number, ttlMs: number): Promise<string> {
  const token = randomToken();
  await db.query(
    `INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
    [sha256Hex(token), userId, ttlMs],
  );
  // Expired sessions are removed here rather than by a schedule: sign-ins are rare, and this keeps the table small.
  await db.query('DELETE FROM sessions WHERE expires_at < now()');
  return token;
}

export async function findSessionUserId(db: Queryable, token: string): Promise<number | undefined> {
  const { rows } = await db.query<{ user_id: number }>('SELECT user_id FROM sessions WHERE token_hash = $1 AND expires_at > now()', [
    sha256Hex(token),
  ]);
  return rows[0]?.user_id;
}

export async function deleteSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [sha256Hex(token)]);
}
