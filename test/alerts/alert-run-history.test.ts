import { beforeAll, describe, expect, it } from 'vitest';
import { claimAlert, runClaimedAlert } from '../../src/alerts/alert-run.js';
import { ALERT_RUNS_KEPT } from '../../src/alerts/run-retention.js';
import { cleanupDeliveries } from '../../src/delivery/cleanup.js';
import { waitUntil } from '../support/processes.js';
import { useTestService } from '../support/test-service.js';

// Issue 44, item 11: run history grew forever (a CRON with seconds recorded a run a second). Runs are removed on the
// cleanup schedule past alertRunRetentionDelayMs, the newest ALERT_RUNS_KEPT of each alert kept; and an alert runs
// at most once every ALERTS_MIN_INTERVAL_MS (a minute by default).
describe('alert run history and the least interval between runs', () => {
  // ROLE=all: the cleanup runs on its schedule.
  const t = useTestService({ env: { ROLE: 'all' } });
  const DAY = 86_400_000;

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'history', name: 'History', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of ['CREATE NODE TABLE Account(id INT64, PRIMARY KEY(id))', 'CREATE (:Account {id: 1})']) {
      expect((await t.admin.post('/api/history/graph/run/query', { query })).status).toBe(200);
    }
  });

  const newAlert = async (title: string, body: Record<string, unknown> = {}) => {
    const answer = await t.admin.post('/api/admin/history/alerts', { title, queries: [{ name: 'accounts', query: 'MATCH (a:Account) RETURN a' }], ...body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.id as number;
  };
  /** `count` runs of the alert, the newest started `newestAgeMs` ago, each a second before the next. */
  const pastRuns = (alertId: number, count: number, newestAgeMs: number) =>
    t.db.query(
      `INSERT INTO alert_runs (alert_id, trigger, outcome, started_at, duration_ms)
       SELECT $1, 'schedule', 'ok', now() - ($3::float8 + ($2 - i) * 1000) * interval '1 millisecond', 5 FROM generate_series(1, $2) AS i`,
      [alertId, count, newestAgeMs],
    );
  const runCount = async (alertId: number) => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_runs WHERE alert_id = $1', [alertId])).rows[0]!.n;

  it('removes runs past the retention on cleanup, keeping the newest of each alert whatever their age', async () => {
    expect(t.service.settings.webhooks.alertRunRetentionDelayMs).toBe(30 * DAY);
    const old = await newAlert('Old runs');
    const few = await newAlert('Few runs');
    const mixed = await newAlert('Recent and old runs');
    await pastRuns(old, ALERT_RUNS_KEPT + 30, 40 * DAY);
    await pastRuns(few, 5, 40 * DAY);
    await pastRuns(mixed, 10, 40 * DAY);
    await pastRuns(mixed, ALERT_RUNS_KEPT + 5, DAY);
    const result = await cleanupDeliveries(t.db, t.service.settings.webhooks);
    // Old: all past retention, the newest 100 kept. Few: all past retention, all among the newest. Mixed: its old
    // runs are past both; 5 recent ones are past the newest 100 but within retention.
    expect(result).toMatchObject({ ran: true, runs: 30 + 0 + 10 });
    expect([await runCount(old), await runCount(few), await runCount(mixed)]).toEqual([ALERT_RUNS_KEPT, 5, ALERT_RUNS_KEPT + 5]);
    // The newest are those kept: the alert still shows its last runs.
    const shown = (await t.admin.get(`/api/history/alerts/${old}/runs?limit=1`)).body.items[0];
    expect(Date.now() - new Date(shown.startedAt).getTime()).toBeLessThan(41 * DAY);
  });

  it('follows the retention setting, on the cleanup schedule', async () => {
    const alertId = await newAlert('Hourly runs');
    await pastRuns(alertId, ALERT_RUNS_KEPT + 10, 2 * 3_600_000);
    expect((await t.admin.post('/api/config', { path: 'webhooks.alertRunRetentionDelayMs', configuration: 3_600_000 })).status).toBe(204);
    expect((await t.admin.post('/api/config', { path: 'webhooks.cleanupFrequency', configuration: '* * * * * *' })).status).toBe(204);
    try {
      await waitUntil(async () => (await runCount(alertId)) === ALERT_RUNS_KEPT, 'the cleanup schedule removes the runs past an hour', 10_000);
    } finally {
      await t.admin.post('/api/config', { path: 'webhooks', configuration: { cleanupFrequency: '0 0 * * *', alertRunRetentionDelayMs: 30 * DAY } });
    }
  });

  it('refuses a CRON that fires more often than once a minute, naming the bound', async () => {
    expect(t.service.alertRuns.limits.minIntervalMs).toBe(60_000);
    for (const cron of ['* * * * * *', '*/30 * * * * *', '0,30 * * * * *']) {
      const answer = await t.admin.post('/api/admin/history/alerts', { title: 'Too often', cron, queries: [{ name: 'q', query: 'MATCH (a:Account) RETURN a' }] });
      expect(answer.status, cron).toBe(400);
      expect(answer.body).toMatchObject({ key: 'invalid_parameter', field: 'cron', message: expect.stringMatching(/fires .* apart .* at most once every 1 min \(ALERTS_MIN_INTERVAL_MS\)/) });
    }
    await newAlert('Every minute', { cron: '* * * * *' });
    await newAlert('Twice an hour', { cron: '0 0,30 * * * *' });
    const alertId = await newAlert('Changed');
    expect((await t.admin.patch(`/api/admin/history/alerts/${alertId}`, { cron: '*/10 * * * * *' })).status).toBe(400);
  });

  it('runs an alert saved with a finer CRON no more often than the bound', async () => {
    const alertId = await newAlert('Saved before the bound');
    // As an alert saved before the bound was set: every second.
    await t.db.query(`UPDATE alerts SET cron = '* * * * * *' WHERE id = $1`, [alertId]);
    const runs = t.service.alertRuns;
    const summary = await runClaimedAlert(runs, { ...(await claimAlert(t.db, runs.owner, alertId, runs.limits))!, manual: false });
    expect(summary.outcome).toBe('ok');
    const { rows } = await t.db.query<{ gap: number }>(
      `SELECT extract(epoch FROM a.next_run_at - r.started_at)::float8 AS gap FROM alerts a JOIN alert_runs r ON r.alert_id = a.id WHERE a.id = $1`,
      [alertId],
    );
    expect(rows[0]!.gap).toBeGreaterThanOrEqual(59.9);
    expect(rows[0]!.gap).toBeLessThanOrEqual(61);
  });
});
