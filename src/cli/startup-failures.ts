import path from 'node:path';
import { errorCode } from '../errors.js';
import { redactUrl, type ProcessConfig } from '../env.js';

/**
 * A failure the operator fixes (a port taken, a database out of reach, a directory that cannot be written): the
 * CLI prints its message alone, one line saying what is wrong and what to do, and exits 1. No stack: it would
 * bury the one line that matters, and it points at our code when the fix is in the environment.
 */
export class OperatorError extends Error {
  override name = 'OperatorError';
}

type ErrnoError = NodeJS.ErrnoException & { address?: string; port?: number };

const asErrno = (err: unknown): ErrnoError | undefined => (err instanceof Error && errorCode(err) !== undefined ? (err as ErrnoError) : undefined);

/** A listen that failed on `variable` (PORT, METRICS_PORT), told as what to change. */
export function listenFailure(err: unknown, variable: string, host: string, port: number): unknown {
  const code = asErrno(err)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new OperatorError(`cannot listen on ${where}: the port is in use by another process. Stop that process, or set ${variable} to a free port.`);
  if (code === 'EACCES') return new OperatorError(`cannot listen on ${where}: this user may not use port ${port}. Set ${variable} to a port above 1023.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new OperatorError(`cannot listen on ${where}: this machine has no address ${host}. Set HOST to one of its addresses (0.0.0.0: all of them).`);
  return err;
}

// What PostgreSQL (SQLSTATE) or the socket (errno) says when the database cannot be used at all, in words.
const DATABASE_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (DNS did not answer)',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the server closed the connection',
  '28P01': 'the password was refused',
  '28000': 'the server refuses this user or address (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up or shutting down',
};

const DATA_DIR_FAILURES: Record<string, string> = {
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'a part of the path is a file, not a directory',
  EACCES: 'this user may not write there',
  EPERM: 'this user may not write there',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
};

/**
 * The operator's reading of an error that stopped the start (or an admin command), or the error itself when it is
 * not one of these: PostgreSQL out of reach, DATA_DIR not writable.
 */
export function explainStartupFailure(err: unknown, config: Pick<ProcessConfig, 'databaseUrl' | 'dataDir'>): unknown {
  if (err instanceof OperatorError) return err;
  // Node's happy-eyeballs connect (localhost: ::1 and 127.0.0.1) fails with an AggregateError carrying the code.
  const errno = asErrno(err) ?? asErrno((err as { errors?: unknown[] } | undefined)?.errors?.[0]);
  const code = errno?.code;
  if (!code) return err;
  if (config.databaseUrl && DATABASE_FAILURES[code]) {
    return new OperatorError(
      `cannot use PostgreSQL at ${redactUrl(config.databaseUrl)}: ${DATABASE_FAILURES[code]} (${code}). ` +
        'Check DATABASE_URL, and that the server runs and accepts this user from this machine.',
    );
  }
  const failedPath = errno.path ? path.resolve(errno.path) : undefined;
  const dataDir = path.resolve(config.dataDir);
  // The failing path is DATA_DIR, inside it, or one of its parents (mkdir -p walks up).
  const aboutDataDir = failedPath !== undefined && (failedPath.startsWith(dataDir) || dataDir.startsWith(failedPath + path.sep));
  if (!config.databaseUrl && DATA_DIR_FAILURES[code] && aboutDataDir) {
    return new OperatorError(
      `cannot write DATA_DIR ${dataDir}: ${DATA_DIR_FAILURES[code]} (${code} on ${failedPath}). ` +
        'Set DATA_DIR to a directory this user can write (it is created if missing), or use PostgreSQL (DATABASE_URL).',
    );
  }
  return err;
}
