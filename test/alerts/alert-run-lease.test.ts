import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimAlert, runClaimedAlert } from '../../src/alerts/alert-run.js';
import { AlertScheduler } from '../../src/alerts/alert-scheduler.js';
import { RUN_LEASE_MS } from '../../src/alerts/run-lease.js';
import { GraphRegistry } from '../../src/sources/graph-registry.js';
import { removeDir } from '../support/databases.js';
import { SLOW_CROSS_PRODUCT } from '../support/fixtures.js';
import { waitUntil } from '../support/processes.js';
import { useTestService } from '../support/test-service.js';

// Issue 44, item 8: an alert run's claim is a short lease renewed while the run lives, so a run whose process is
// gone is done again within the lease (it waited the run's time-out and 120 s: 12 minutes with the defaults).
describe('the lease of an alert run', () => {
  const t = useTestService();
  let alertId: number;
  const lease = (runLeaseMs: number) => ({ ...t.service.alertRuns.limits, runLeaseMs });
  const runs = async (id: number) => (await t.admin.get(`/api/lease/alerts/${id}/runs`)).body.items as { startedAt: string; outcome: string; matchesNew: number }[];

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'lease', name: 'Lease', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of ['CREATE NODE TABLE Account(id INT64, PRIMARY KEY(id))', 'UNWIND range(1, 3) AS i CREATE (:Account {id: i})']) {
      expect((await t.admin.post('/api/lease/graph/run/query', { query })).status).toBe(200);
    }
    // The longest time-out an alert may have: the lease does not follow it.
    const alert = await t.admin.post('/api/admin/lease/alerts', { title: 'Accounts', queries: [{ name: 'accounts', query: 'MATCH (a:Account) RETURN a' }], timeoutMs: 600_000 });
    expect(alert.status, JSON.stringify(alert.body)).toBe(201);
    alertId = alert.body.id;
  });

  it('is 30 s from the claim, whatever the alert\'s time-out', async () => {
    expect(await claimAlert(t.db, 'lease-check', alertId, t.service.alertRuns.limits)).toBeDefined();
    try {
      const { rows } = await t.db.query<{ seconds: number }>('SELECT extract(epoch FROM run_locked_until - now())::float8 AS seconds FROM alerts WHERE id = $1', [alertId]);
      expect(RUN_LEASE_MS).toBe(30_000);
      expect(rows[0]!.seconds).toBeGreaterThan(25);
      expect(rows[0]!.seconds).toBeLessThanOrEqual(30);
    } finally {
      await t.db.query('UPDATE alerts SET run_owner = NULL, run_locked_until = NULL WHERE id = $1', [alertId]);
    }
  });

  it('is run again by a live process once the lease of a gone one ends, not before', async () => {
    // A process claims the run, as asked, and is gone: it never renews its lease of 2 s.
    await t.db.query('UPDATE alerts SET run_requested_at = now() WHERE id = $1', [alertId]);
    const claimed = await claimAlert(t.db, 'gone-process', alertId, lease(2_000));
    expect(claimed).toBeDefined();
    const claimedAt = Date.now();
    // A live process's schedule (every second) finds it claimed meanwhile, and runs it as soon as the lease ends.
    const live = new AlertScheduler({ ...t.service.alertRuns, owner: 'live-process' });
    live.start();
    try {
      await waitUntil(async () => (await runs(alertId)).length > 0, 'the run done again', 15_000, 100);
    } finally {
      await live.stop();
    }
    const [run] = await runs(alertId);
    expect(run).toMatchObject({ outcome: 'ok', matchesNew: 3 });
    expect(new Date(run!.startedAt).getTime()).toBeGreaterThanOrEqual(claimedAt + 1_500);
    expect(new Date(run!.startedAt).getTime()).toBeLessThan(claimedAt + 2_000 + 5_000);
    // The gone process's run, were it to come back, records nothing: its claim is another's now.
    expect(await runClaimedAlert({ ...t.service.alertRuns, owner: 'gone-process' }, claimed!)).toMatchObject({ outcome: 'failed', matchesNew: 0, events: 0 });
    expect(await runs(alertId)).toHaveLength(1);
  });

  it('is renewed while the run lives: a run five times as long as its lease keeps it, and records', async () => {
    const slow = await t.admin.post('/api/admin/lease/alerts', {
      title: 'Slow',
      queries: [{ name: 'slow', query: `${SLOW_CROSS_PRODUCT} WITH count(*) AS n MATCH (a:Account) RETURN a, n` }],
      timeoutMs: 3_000,
    });
    expect(slow.status, JSON.stringify(slow.body)).toBe(201);
    const deps = { ...t.service.alertRuns, owner: 'slow-process', limits: lease(600) };
    const claimed = await claimAlert(t.db, deps.owner, slow.body.id, deps.limits);
    const started = Date.now();
    const running = runClaimedAlert(deps, claimed!);
    // Past two leases of 600 ms, the run still holds the alert: no other process can claim it.
    await sleep(1_500);
    expect(await claimAlert(t.db, 'other-process', slow.body.id, deps.limits)).toBeUndefined();
    const summary = await running;
    expect(Date.now() - started).toBeGreaterThan(3_000);
    expect(summary.outcome).toBe('partial');
    expect(summary.problems).toEqual([expect.objectContaining({ error: expect.objectContaining({ key: 'graph_request_timeout' }) })]);
    expect(await runs(slow.body.id)).toHaveLength(1);
  });

  it('lets another process take an embedded graph over within 10 s of its holder\'s end, on its schedule alone', async () => {
    // Two processes' registries on one DATA_DIR of their own (the service holds its graphs in its own).
    const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-takeover-'));
    const options = { dataDir, bufferPoolBytes: 64 * 1024 * 1024, keyring: t.service.keyring, logger: t.service.alertRuns.logger };
    const holder = new GraphRegistry(options);
    const other = new GraphRegistry(options);
    try {
      expect(await holder.servableEmbedded(t.db)).toContain('lease');
      // The other one finds the graph held, as its alert schedule does each second.
      expect(await other.servableEmbedded(t.db)).not.toContain('lease');
      await holder.close();
      const released = Date.now();
      await waitUntil(async () => (await other.servableEmbedded(t.db)).includes('lease'), 'the other process holds the graph', 15_000, 1_000);
      expect(Date.now() - released).toBeLessThan(10_000);
    } finally {
      await holder.close();
      await other.close();
      removeDir(dataDir);
    }
  });
});
