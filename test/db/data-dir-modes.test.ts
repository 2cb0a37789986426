import { chmodSync, lstatSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { secureDataDir } from '../../src/db/data-dir-modes.js';
import { createLogger } from '../../src/logger.js';
import { copyPgliteTemplate, removeDir } from '../support/databases.js';

/** Every file and directory under `dir` (itself included) whose mode lets group or others in, as `path mode`. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    const stat = lstatSync(entry);
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) found.push(`${path.relative(dir, entry) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(entry)) pending.push(path.join(entry, name));
  }
  return found;
}

/** Makes everything under `dir` as a careless copy would: directories 0755, files 0666. */
function loosen(dir: string): number {
  let count = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    const stat = lstatSync(entry);
    chmodSync(entry, stat.isDirectory() ? 0o755 : 0o666);
    count++;
    if (stat.isDirectory()) for (const name of readdirSync(entry)) pending.push(path.join(entry, name));
  }
  return count;
}

describe('DATA_DIR file modes', () => {
  it('tightens an existing DATA_DIR at start with one warning, and creates files its owner’s alone', async () => {
    const lines: { level: number; msg: string; entries?: number }[] = [];
    const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const template = inject('dbTemplate');
    if (template.kind === 'pglite') {
      // The embedded database itself: its WAL, pg_control and every table file.
      const dataDir = copyPgliteTemplate(template.dataDir);
      try {
        const loosened = loosen(dataDir);
        expect(openToOthers(dataDir).length).toBe(loosened);
        const db = await createDatabase({ dataDir, logger: log });
        await db.query('CREATE TABLE fresh_after_start (id int)');
        await db.query('INSERT INTO fresh_after_start SELECT generate_series(1, 1000)');
        await db.query('CHECKPOINT');
        expect(openToOthers(dataDir)).toEqual([]);
        await db.close();
        expect(openToOthers(dataDir)).toEqual([]);
        expect(lines.filter((l) => l.msg.startsWith('DATA_DIR could be read by other users'))).toMatchObject([{ level: 40, entries: loosened }]);
      } finally {
        removeDir(dataDir);
      }
    } else {
      // PostgreSQL keeps no database in DATA_DIR, but embedded graphs live there: the same rule, on plain files.
      const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-modes-'));
      try {
        writeFileSync(path.join(dataDir, 'old-file'), 'x');
        expect(loosen(dataDir)).toBe(2);
        expect(secureDataDir(dataDir, log)).toBe(2);
        writeFileSync(path.join(dataDir, 'new-file'), 'y');
        expect(openToOthers(dataDir)).toEqual([]);
        expect(secureDataDir(dataDir, log)).toBe(0);
        expect(lines.filter((l) => l.msg.startsWith('DATA_DIR could be read by other users'))).toHaveLength(1);
      } finally {
        removeDir(dataDir);
      }
    }
  }, 60_000);
});
