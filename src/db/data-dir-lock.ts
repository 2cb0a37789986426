import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { errorCode } from '../errors.js';

export interface DataDirLock {
  release(): void;
}

/** Who holds a lock: written into DATA_DIR/.lock. */
export interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
  /**
   * Linux: the holder's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) and the boot's id. A pid
   * alone does not name a process: a container restarts as pid 1 every time, and pids are reused. Absent where
   * /proc is not (macOS), and in locks written before these were recorded.
   */
  startTicks?: string;
  bootId?: string;
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

// The lock files this process holds (resolved paths). Where /proc is missing, it is what tells a lock of this
// process from a stale one that an earlier process with the same pid left behind.
const held = new Set<string>();

/**
 * PGlite does not lock its directory, and two processes on one directory silently lose committed rows.
 * So the first opener writes DATA_DIR/.lock (created exclusively); a later opener fails naming the holder.
 * A stale lock on this host, one whose process is gone, is taken over: see isHeld for how "gone" is decided.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const lockPath = path.resolve(dataDir, '.lock');
  const me: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), ...processIdentity(process.pid) };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      held.add(lockPath);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        held.delete(lockPath);
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
      if (errorCode(err) !== 'EEXIST') throw err;
      const owner = readOwner(lockPath);
      if (owner && isHeld(owner, lockPath)) throw new DataDirLockedError(dataDir, owner);
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

/**
 * The start time and boot id of process `pid`, from /proc; undefined where /proc is missing or the process is not
 * running (or cannot be read).
 */
export function processIdentity(pid: number): { startTicks: string; bootId: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so fields are counted after the last ')'.
    // The first field after it is field 3 (state); starttime is field 22.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3];
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks && bootId ? { startTicks, bootId } : undefined;
  } catch {
    return undefined;
  }
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lockPath, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote the lock still holds it. */
function isHeld(owner: LockOwner, lockPath: string): boolean {
  if (owner.hostname !== hostname()) return true; // cannot check another host's process: assume it runs
  const bootId = processIdentity(process.pid)?.bootId;
  // Written in an earlier boot of this host: every process of that boot is gone.
  if (owner.bootId && bootId && owner.bootId !== bootId) return false;
  if (owner.pid === process.pid) {
    // Our own pid: ours only if this very process wrote it. With /proc, the start time says so (it also covers a
    // second copy of this module, e.g. on another thread); without, the locks this process holds say so. A lock
    // naming our pid from an earlier process (a container restarting as pid 1) is stale.
    const mine = processIdentity(process.pid);
    if (owner.startTicks && mine) return owner.startTicks === mine.startTicks;
    return held.has(lockPath);
  }
  if (owner.startTicks) {
    const running = processIdentity(owner.pid);
    // /proc answered: the pid runs as the holder only with the holder's start time (else the pid was reused).
    if (running) return running.startTicks === owner.startTicks;
    // No /proc entry: either the process is gone, or /proc cannot be read here; the signal check below tells.
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
}
