import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchScript } from '../support/bench-script.js';

// The graph bench runs (quick: 20,000 edges) and reports every figure. No figure is judged here: they are the
// bench's to report (bench/README.md, "Graph"). In test/graph/, so it runs once (the bench's service is on PGlite).
describe('graph benchmark harness', () => {
  it('runs --quick: loads the generated graph with graph load, queries it both ways, and writes every figure', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-graph-bench-test-'));
    const out = path.join(dir, 'graph.json');
    try {
      const code = await runBenchScript('graph.ts', ['--quick', '--out', out]);
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.mode).toBe('quick');
      expect(report.settings.graphMemoryMb).toBe(256);
      // Every edge generated was loaded, and the 2-hop query found rows and answered nodes and edges.
      expect(report.load.edges).toBe(report.settings.edges);
      expect(report.query.rows).toBeGreaterThan(0);
      expect(report.query.answerItems).toBeGreaterThan(0);
      for (const [group, names] of Object.entries({ load: ['seconds', 'edgesPerSecond'], query: ['directMedianMs', 'serviceMedianMs', 'ratio'], memory: ['servicePeakRssMb', 'kuzuPeakRssMb'] })) {
        for (const name of names) expect(Number.isFinite(report[group][name]) && report[group][name] > 0, `${group}.${name}`).toBe(true);
      }
      expect(report.memory.totalPeakRssMb).toBe(report.memory.servicePeakRssMb + report.memory.kuzuPeakRssMb);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
