import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchScript } from '../support/bench-script.js';

// The operator bench runs (quick: 20,000 deliveries, on this project's database) and reports every figure. No figure
// is judged here but the plans' shape: they are the bench's to report (bench/README.md, "Health over time and search").
describe('operator benchmark harness', () => {
  it('runs --quick: every health read and search measured, no table scanned, both write costs reported', async () => {
    const kind = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-operator-bench-test-'));
    const out = path.join(dir, 'operator.json');
    try {
      expect(await runBenchScript('operator.ts', ['--quick', '--db', kind, '--out', out])).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.mode).toBe('quick');
      const figures = report.databases[kind];
      expect(Object.keys(figures.health)).toHaveLength(6);
      for (const read of Object.values<{ medianMs: number; deliveriesRead: number }>(figures.health)) {
        expect(read.medianMs).toBeGreaterThan(0);
        expect(read.deliveriesRead).toBe(0);
      }
      for (const { first } of Object.values<{ first: { rows: number; seqScans: string[] } }>(figures.search)) {
        expect(first.rows).toBeGreaterThan(0);
        expect(first.seqScans).toEqual([]);
      }
      for (const side of ['withCounts', 'withoutCounts']) expect(figures.writes.outcomes[side].microsecondsPerOutcome).toBeGreaterThan(0);
      for (const side of ['withIndexes', 'withoutIndexes']) expect(figures.writes.events[side].microsecondsPerEvent).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
