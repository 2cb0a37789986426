import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchScript } from './support/bench-script.js';

// The contention bench runs (small: one round of 2,000 deliveries a drain) and reports every figure, quiet and beside
// its CPU load, for the service on this project's database and one peer (the other peer on the other project).
// No timing is asserted: figures are the bench's to report, not the suite's to judge.
describe('contention bench', () => {
  it('drains each contestant quiet and busy and writes CPU, statements and context switches per delivery', async () => {
    const service = process.env.TEST_DB === 'postgres' ? 'service' : 'service-pglite';
    const peer = process.env.TEST_DB === 'postgres' ? 'pg-boss' : 'graphile-worker';
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-contention-test-'));
    const out = path.join(dir, 'contention.json');
    try {
      const code = await runBenchScript('contention.ts', ['--quick', '--deliveries', '2000', '--only', `${service},${peer}`, '--out', out]);
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.settings.loadProcesses).toBe(report.machine.cpus);
      expect(report.drains).toHaveLength(4);
      for (const name of [service, peer]) {
        for (const condition of ['quiet', 'busy']) {
          const drain = report.drains.find((d: { contestant: string; condition: string }) => d.contestant === name && d.condition === condition);
          expect(drain, `${name} ${condition}`).toBeDefined();
          expect(drain.deliveriesPerSecond).toBeGreaterThan(0);
          expect(drain.extraReceived).toBe(0);
          expect(drain.cpuUs.sender).toBeGreaterThan(0);
          expect(drain.cpuUs.receiver).toBeGreaterThan(0);
          // The load ran beside the busy drains only.
          if (condition === 'busy') expect(drain.cpuUs.load).toBeGreaterThan(0);
          else expect(drain.cpuUs.load).toBe(0);
          // PostgreSQL's share and statements where the contestant's database is on the server; PGlite runs inside the service.
          if (name === 'service-pglite') {
            expect(drain.statements).toBeNull();
            expect(drain.cpuUs.postgres).toBe(0);
          } else {
            expect(drain.statements).toBeGreaterThan(0);
            expect(drain.cpuUs.postgres).toBeGreaterThan(0);
          }
          for (const pair of Object.values(drain.switches) as number[][]) expect(pair.every((n) => Number.isFinite(n) && n >= 0)).toBe(true);
          expect(drain.loadAverage).toHaveLength(2);
          expect(report.summary[name][condition].deliveriesPerSecond).toBeGreaterThan(0);
        }
      }
      expect(report.ceilings.map((c: { condition: string }) => c.condition)).toEqual(['quiet', 'busy']);
      // The service's latency under `immediate`, quiet and busy: every event delivered.
      for (const condition of ['quiet', 'busy']) expect(report.latency[condition].received).toBe(report.latency[condition].events);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 420_000);
});
