import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/processes.js';

// The benchmark harness runs (quick mode, on this project's database) and reports every figure.
// No timing is asserted: figures are the harness's to report, not the suite's to judge.
describe('benchmark harness', () => {
  it('runs --quick and writes the JSON with every figure', async () => {
    const kind = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-bench-test-'));
    const out = path.join(dir, 'results.json');
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick', '--db', kind, '--out', out], {
          cwd: REPO_ROOT,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
        child.on('exit', (exitCode) => {
          if (exitCode !== 0) console.error(stderr);
          resolve(exitCode);
        });
      });
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.mode).toBe('quick');
      expect(report.machine.cpus).toBeGreaterThan(0);
      expect(report.ceiling.deliveriesPerSecond).toBeGreaterThan(0);
      const figures = report.databases[kind];
      for (const [group, names] of Object.entries({
        ingest: ['eventsPerSecond', 'deliveriesPerSecond'],
        drain: ['deliveriesPerSecond', 'ratioToCeiling', 'peakRssMb'],
        latency: ['p50Ms', 'p99Ms'],
        cleanup: ['rows', 'seconds', 'deliveredDuring'],
      })) {
        for (const name of names) expect(Number.isFinite(figures[group][name]) && figures[group][name] > 0, `${group}.${name}`).toBe(true);
      }
      expect(figures.drain.deliveries).toBe(report.settings.drainDeliveries);
      expect(figures.latency.received).toBe(figures.latency.events);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
