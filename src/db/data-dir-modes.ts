import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.js';

/**
 * Files this process creates are its owner's alone (0600, directories 0700): the embedded database's files, its WAL
 * and `pg_control` among them, hold the admin's password hash and every sealed secret, and were 0666 in a 0755
 * DATA_DIR, readable by any user of the host. Process-wide, so the embedded database's thread and any process
 * started from this one (an embedded graph) create theirs the same way.
 */
export function restrictNewFiles(): void {
  process.umask(0o077);
}

/**
 * Makes `dataDir` (created 0700 if missing) and everything under it readable by its owner alone, and says in one
 * warning how many entries it had to tighten: a DATA_DIR from an earlier version, or copied with looser modes.
 * Symbolic links are left alone (and not followed). Answers how many entries were tightened.
 */
export function secureDataDir(dataDir: string, log: Logger): number {
  restrictNewFiles();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tightened = tightenDataDir(dataDir);
  if (tightened > 0) {
    log.warn({ dataDir, entries: tightened }, 'DATA_DIR could be read by other users: its files and directories are now its owner\'s alone (0600, 0700)');
  }
  return tightened;
}

/**
 * Takes group and others' access away from everything under `dataDir`; answers how many entries it changed. Also run
 * once the embedded database has opened and when it closes: the WASM engine writes its relation-cache files
 * (`pg_internal.init`, catalog descriptors, no rows) with its own umask of 022, whatever the process's is.
 */
export function tightenDataDir(dataDir: string): number {
  let tightened = 0;
  const pending = [dataDir];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    const stat = lstatSync(entry);
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) {
      chmodSync(entry, stat.mode & 0o700);
      tightened++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(entry)) pending.push(path.join(entry, name));
  }
  return tightened;
}
