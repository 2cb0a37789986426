import { errorCode } from '../errors.js';

/**
 * A database error as a log line carries it: SQLSTATE (or the socket's errno code) and message. Never the error
 * object itself: a connection error can carry its configuration, and the URL holds the password.
 */
export function describeDbError(err: unknown): { code?: string; message: string } {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = errorCode(err);
  return code !== undefined ? { code, message: err.message } : { message: err.message };
}

/** The code of the error every statement gets once the embedded database's thread has stopped. */
const EMBEDDED_STOPPED = 'EMBEDDED_DATABASE_STOPPED';

export function databaseStopped(message: string): Error {
  return Object.assign(new Error(message), { code: EMBEDDED_STOPPED });
}

// The socket's errno codes of a database that cannot be reached, or whose disk or files fail it.
const UNREACHABLE_CODES = new Set([EMBEDDED_STOPPED, 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOSPC', 'EIO']);
// What pg says, without a code, when a connection is lost or cannot be had, and after the pool was closed.
const UNREACHABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
  'Client was closed and is not queryable',
];

const CONNECTION_FAILED = Symbol('connection failed');

/**
 * Marks `err` as a failure to obtain a connection, and returns it. Whatever it says, the database is away for the
 * caller: the server refused the session (55000 "not currently accepting connections" after ALLOW_CONNECTIONS false,
 * 3D000 a database that does not exist, 53300 too many clients, 57P03 starting up, 28xxx), the TCP connection was
 * refused, reset or timed out, TLS failed, or what answered does not speak PostgreSQL. No statement ran, so nothing
 * about it was wrong; reading the error's code alone missed 55000 and 3D000 (a 500 `bug` with a stack per call).
 */
export function connectionFailed(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  if (!Object.hasOwn(error, CONNECTION_FAILED)) Object.defineProperty(error, CONNECTION_FAILED, { value: true });
  return error;
}

/**
 * Whether `err` says the database is away rather than that a statement was wrong: no connection could be had
 * (connectionFailed), it cannot be reached (refused, reset, timed out), the server is shutting down or starting
 * (SQLSTATE 57P01-57P03), its connection failed (class 08), it lacks resources such as connections or disk space
 * (class 53: 53300 too many clients, 53100 disk full) or its files fail (class 58), or the embedded database's
 * thread stopped. Such a failure passes by itself; a caller is told to try again later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if ((err as { [CONNECTION_FAILED]?: boolean })[CONNECTION_FAILED] === true) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE_CODES.has(code)) return true;
    if (/^(08|53|58)[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  return UNREACHABLE_MESSAGES.some((text) => err.message.includes(text));
}
