import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

export interface DataDirLock {
  release(): void;
}

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${owner.pid} on ${owner.hostname} (since ${owner.startedAt}). ` +
        'The embedded database serves one process: stop that process, or point DATA_DIR elsewhere, ' +
        'or use PostgreSQL (DATABASE_URL) to run several processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * PGlite does not lock its directory, and two processes on one directory silently lose committed rows.
 * So the first opener writes DATA_DIR/.lock (created exclusively); a later opener fails naming the holder.
 * A lock left by a dead process on this host is taken over.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const lockPath = path.join(dataDir, '.lock');
  const me: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          unlinkSync(lockPath);
        } catch {
          // already gone: nothing to release
        }
      };
      process.on('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(lockPath);
      if (owner && isAlive(owner)) throw new DataDirLockedError(dataDir, owner);
      // Stale: its process is gone. Remove it and try once more (a racing opener may still win; then we fail above).
      try {
        unlinkSync(lockPath);
      } catch {
        // another process removed it first
      }
    }
  }
  const owner = readOwner(lockPath) ?? { pid: -1, hostname: 'unknown', startedAt: 'unknown' };
  throw new DataDirLockedError(dataDir, owner);
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lockPath, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return true; // cannot check another host's process: assume it runs
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
