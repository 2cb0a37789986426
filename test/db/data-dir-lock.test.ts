import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, processIdentity, type LockOwner } from '../../src/db/data-dir-lock.js';
import { removeDir } from '../support/databases.js';

// The embedded database's DATA_DIR/.lock, on the file system alone (no database): the same on both projects.
describe('the DATA_DIR lock', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'aw-lock-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    removeDir(dataDir);
  });

  const writeLock = (owner: Partial<LockOwner>) =>
    writeFileSync(path.join(dataDir, '.lock'), JSON.stringify({ hostname: hostname(), startedAt: 'an earlier boot', ...owner }));
  const lockOwner = () => JSON.parse(readFileSync(path.join(dataDir, '.lock'), 'utf8')) as LockOwner;

  it('records who holds it: pid, start time and boot id', () => {
    const lock = acquireDataDirLock(dataDir);
    try {
      const me = processIdentity(process.pid);
      expect(me?.startTicks).toMatch(/^\d+$/);
      expect(lockOwner()).toMatchObject({ pid: process.pid, hostname: hostname(), ...me });
    } finally {
      lock.release();
    }
    expect(existsSync(path.join(dataDir, '.lock'))).toBe(false);
  });

  it("takes over a stale lock naming this very pid from an earlier process (a container restarting as pid 1)", () => {
    const me = processIdentity(process.pid)!;
    // The same pid, started at another time: an earlier process (or boot) that died without releasing.
    writeLock({ pid: process.pid, startTicks: String(Number(me.startTicks) + 1), bootId: me.bootId });
    const lock = acquireDataDirLock(dataDir);
    expect(lockOwner().startTicks).toBe(me.startTicks);
    lock.release();

    // The same pid and start time, in an earlier boot.
    writeLock({ pid: process.pid, startTicks: me.startTicks, bootId: '00000000-0000-0000-0000-000000000000' });
    acquireDataDirLock(dataDir).release();

    // A lock written before start times were recorded, naming our pid: not held by this process, so stale.
    writeLock({ pid: process.pid });
    acquireDataDirLock(dataDir).release();
  });

  it('refuses a second opener in the same process, naming this process', () => {
    const lock = acquireDataDirLock(dataDir);
    try {
      expect(() => acquireDataDirLock(dataDir)).toThrow(DataDirLockedError);
      expect(() => acquireDataDirLock(dataDir)).toThrow(`in use by process ${process.pid}`);
    } finally {
      lock.release();
    }
    acquireDataDirLock(dataDir).release();
  });

  it("refuses a live process's lock, naming it, and takes over once that pid runs another process", async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
    children.push(child);
    await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
    const identity = processIdentity(child.pid!);
    expect(identity).toBeDefined();
    writeLock({ pid: child.pid!, ...identity });
    expect(() => acquireDataDirLock(dataDir)).toThrow(`in use by process ${child.pid} on ${hostname()}`);
    // The lock is left as it was.
    expect(lockOwner().pid).toBe(child.pid);

    // Same pid, another start time: the holder died and its pid went to an unrelated process.
    writeLock({ pid: child.pid!, startTicks: String(Number(identity!.startTicks) - 1), bootId: identity!.bootId });
    const lock = acquireDataDirLock(dataDir);
    expect(lockOwner().pid).toBe(process.pid);
    lock.release();
  });

  it('takes over the lock of a process that is gone', () => {
    // pid 2^22 + 1 is above Linux's largest pid_max: no such process.
    writeLock({ pid: 4194305, startTicks: '12345', bootId: processIdentity(process.pid)!.bootId });
    acquireDataDirLock(dataDir).release();
  });
});
