import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchScript } from '../support/bench-script.js';

// The alert bench runs (quick: 20,000 edges) and reports every figure. No figure is judged here: they are the
// bench's to report (bench/README.md, "Alerts"). The bench's service is always on PostgreSQL; in test/graph/, so it
// runs once (the postgres project leaves test/graph/ out).
describe('alert benchmark harness', () => {
  it('runs --quick: records the alerts\' matches as the bare queries found them, reruns with no event, and writes every figure', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-alert-bench-test-'));
    const out = path.join(dir, 'alerts.json');
    try {
      const code = await runBenchScript('alerts.ts', ['--quick', '--out', out]);
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.mode).toBe('quick');
      expect(report.load.edges).toBe(report.settings.edges);
      for (const size of ['small', 'large'] as const) {
        const { run, added, matchesPerSecond, ratioToBare } = report.runs[size];
        // Every row the bare query read became a match, an event and (one webhook) a delivery.
        expect(run.matchesNew).toBe(report.bare[size].rows);
        expect(added.matches).toBe(run.matchesNew);
        expect(added.events).toBe(run.matchesNew);
        expect(added.deliveries).toBe(run.matchesNew);
        expect(added.cases).toBe(run.casesOpened);
        expect(matchesPerSecond > 0 && ratioToBare > 0).toBe(true);
        for (const name of ['servicePeakRssMb', 'kuzuPeakRssMb']) expect(report.memory[size][name]).toBeGreaterThan(0);
      }
      expect(report.runs.large.run.matchesNew).toBeGreaterThan(report.runs.small.run.matchesNew);
      // The huge one, for its memory: every row read; its distinct matches new (parallel transfers share an id, so
      // some rows are one match: counted once, issue 44's 4a).
      const huge = report.runs.huge.run;
      expect(huge.rowsRead).toBe(report.bare.huge.rows);
      expect(huge.matchesSeen).toBe(0);
      expect(huge.matchesNew).toBeGreaterThan(0);
      expect(huge.matchesNew).toBeLessThanOrEqual(huge.rowsRead);
      expect(huge.matchesNew).toBeGreaterThan(report.runs.large.run.matchesNew);
      for (const size of ['small', 'large', 'huge'] as const) {
        for (const name of ['servicePeakRssMb', 'kuzuPeakRssMb', 'bareKuzuPeakRssMb']) expect(report.memory[size][name]).toBeGreaterThan(0);
      }
      // The unchanged reruns emitted nothing and wrote no row.
      expect(report.rerun.events).toBe(0);
      expect(report.rerun.runs).toHaveLength(report.settings.reruns);
      for (const again of report.rerun.runs) expect(again.added).toEqual({ cases: 0, matches: 0, events: 0, deliveries: 0 });
      expect(report.rerun.ratioToBare).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
