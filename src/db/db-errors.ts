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
