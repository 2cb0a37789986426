import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { removeDir } from '../support/databases.js';
import { waitUntil } from '../support/processes.js';
import { openTestDatabase, startTestService } from '../support/test-service.js';

// A restart with an embedded graph and alerts once did not answer within 120 s on a loaded machine, and its log did
// not say where it waited (issue 44, item 15): each phase of a start is logged with its duration.
describe('the start, phase by phase', () => {
  it('logs each phase with its duration, and each embedded graph the alert schedule opens after it', async () => {
    const testDb = await openTestDatabase();
    // The graph must be where the second start looks: on PostgreSQL, DATA_DIR holds only the graphs.
    const dataDir = testDb.kind === 'postgres' ? mkdtempSync(path.join(tmpdir(), 'aw-start-')) : undefined;
    const env: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : {};
    try {
      const first = await startTestService({ testDb, env });
      try {
        expect((await first.admin.post('/api/admin/sources', { key: 'kept', name: 'Kept', graph: { vendor: 'embedded' } })).status).toBe(201);
      } finally {
        await first.close();
      }
      const lines: Record<string, unknown>[] = [];
      const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      const second = await startTestService({ testDb, env: { ...env, ROLE: 'all' }, logger });
      try {
        const phases = lines.filter((l) => typeof l.phase === 'string');
        expect(phases.map((l) => l.phase)).toEqual(expect.arrayContaining(['secrets key', 'migrations', 'webhook secrets checked', 'first admin', 'settings', 'API built']));
        for (const line of phases) expect(line).toMatchObject({ level: 30, msg: `start: ${String(line.phase)}`, durationMs: expect.any(Number) });
        expect(lines.find((l) => l.msg === 'start: service started')).toMatchObject({ durationMs: expect.any(Number) });
        // The graph is opened after the start, by the alert schedule's first look for due alerts: said with its time.
        await waitUntil(() => lines.some((l) => l.msg === 'embedded graph opened'), 'the alert schedule opens the graph', 30_000);
        expect(lines.find((l) => l.msg === 'embedded graph opened')).toMatchObject({ level: 30, sourceKey: 'kept', durationMs: expect.any(Number) });
      } finally {
        await second.close();
      }
    } finally {
      await testDb.dispose();
      if (dataDir) removeDir(dataDir);
    }
  }, 120_000);
});
