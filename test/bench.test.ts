import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchScript } from './support/bench-script.js';

// The benchmark harness runs (quick mode, on this project's database) and reports every figure.
// No timing is asserted: figures are the harness's to report, not the suite's to judge.
describe('benchmark harness', () => {
  it('runs --quick and writes the JSON with every figure', async () => {
    const kind = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
    const dir = mkdtempSync(path.join(tmpdir(), 'aw-bench-test-'));
    const out = path.join(dir, 'results.json');
    try {
      const code = await runBenchScript('run.ts', ['--quick', '--db', kind, '--out', out]);
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.mode).toBe('quick');
      expect(report.machine.cpus).toBeGreaterThan(0);
      expect(report.ceiling.deliveriesPerSecond).toBeGreaterThan(0);
      const figures = report.databases[kind];
      for (const [group, names] of Object.entries({
        ingest: ['eventsPerSecond', 'deliveriesPerSecond'],
        drain: ['deliveriesPerSecond', 'ratioToCeiling', 'peakRssMb', 'ratioToCeilingBeside'],
        'drain.ceilingBeside': ['deliveriesPerSecond'],
        'drain.cpu': ['service', 'serviceMainThread', 'receiver'],
        latency: ['p50Ms', 'p99Ms'],
        cleanup: ['rows', 'seconds', 'deliveredDuring'],
        fanout: ['webhooks', 'deliveries', 'deliveriesPerSecond'],
        manyWebhooks: ['webhooks', 'webhooksCreatedPerSecond', 'ratioToDrain'],
        'manyWebhooks.drain': ['deliveriesPerSecond', 'ratioToCeiling'],
        'manyWebhooks.fewWebhooksDrain': ['deliveriesPerSecond', 'ratioToCeiling'],
        'manyWebhooks.idleClaimFew': ['claims', 'meanMs'],
        'manyWebhooks.idleClaimMany': ['claims', 'meanMs'],
      })) {
        const values = group.split('.').reduce((at, key) => at?.[key], figures);
        for (const name of names) expect(Number.isFinite(values?.[name]) && values[name] > 0, `${group}.${name}`).toBe(true);
      }
      expect(figures.drain.deliveries).toBe(report.settings.drainDeliveries);
      expect(figures.manyWebhooks.webhooks).toBe(report.settings.manyWebhooks);
      expect(figures.manyWebhooks.drain.deliveries).toBe(report.settings.flatDeliveries);
      expect(figures.manyWebhooks.fewWebhooksDrain.deliveries).toBe(report.settings.flatDeliveries);
      // The ceiling's rounds before and after the drain; the flat-cost phase's two rounds (few, many, few, many).
      expect(figures.drain.ceilingBeside.rounds).toHaveLength(2 * report.ceiling.rounds.length);
      expect(figures.manyWebhooks.rounds).toHaveLength(2);
      // The drain's CPU: the main thread is one of the service's threads; a PostgreSQL server only where one ran it.
      const { cpu } = figures.drain;
      expect(cpu.serviceMainThread).toBeLessThanOrEqual(cpu.service);
      expect(cpu.machineIdle).toBeGreaterThanOrEqual(0);
      // The scheduler's count of waits for a core (Linux's schedstat): present, and no more than the drain's length.
      for (const waiting of [cpu.serviceMainThreadWaiting, cpu.receiverWaiting]) expect(waiting >= 0 && waiting <= 1).toBe(true);
      if (kind === 'postgres') expect(cpu.postgres).toBeGreaterThan(0);
      for (const round of figures.manyWebhooks.rounds) expect(round.fewPerSecond > 0 && round.manyPerSecond > 0 && round.ratio > 0).toBe(true);
      // A statement's floor after the same pause as the idle claims: on PostgreSQL only (the harness cannot reach into PGlite).
      for (const idle of [figures.manyWebhooks.idleClaimFew, figures.manyWebhooks.idleClaimMany]) {
        if (kind === 'postgres') expect(idle.roundTripFloorMs).toBeGreaterThan(0);
        else expect(idle.roundTripFloorMs).toBeUndefined();
      }
      expect(figures.latency.received).toBe(figures.latency.events);
      expect(figures.fanout.webhooks).toBe(report.settings.fanoutWebhooks);
      // Under `immediate` where the service takes it (then with the per-second comparisons), else per second.
      expect(figures.latency.deliveryFrequency).toBe(figures.immediate.supported ? 'immediate' : '* * * * * *');
      if (figures.immediate.supported) {
        expect(figures.latencyPerSecond.received).toBe(figures.latencyPerSecond.events);
        expect(figures.immediateDrain.deliveries).toBe(report.settings.drainDeliveries);
        expect(figures.immediateDrain.deliveriesPerSecond).toBeGreaterThan(0);
      } else {
        expect(figures.immediate.note).toMatch(/immediate/);
      }
      // The peers mode is --peers only: not in CI.
      expect(report.peers).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 420_000);
});
