import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimAlert, claimDueAlert, runClaimedAlert } from '../../src/alerts/alert-run.js';
import { useTestService } from '../support/test-service.js';

// A manual run's request time (set with the database's now()) is compared with when a run was claimed: both must be
// the database's clock. The service's clock is moved here (Date only) while the database's is not.
const SKEW_MS = 10 * 60_000;

describe('a manual run request, with the service\'s clock and the database\'s apart', () => {
  const t = useTestService();
  let alertId: number;

  beforeAll(async () => {
    expect((await t.admin.post('/api/admin/sources', { key: 'clock', name: 'Clock', graph: { vendor: 'embedded' } })).status).toBe(201);
    for (const query of ['CREATE NODE TABLE Account(id STRING, PRIMARY KEY(id))', "CREATE (:Account {id: 'a1'})"]) {
      expect((await t.admin.post('/api/clock/graph/run/query', { query })).status).toBe(200);
    }
    const created = await t.admin.post('/api/admin/clock/alerts', { title: 'Accounts', queries: [{ name: 'all', query: 'MATCH (a:Account) RETURN a', dialect: 'cypher' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    alertId = created.body.id;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const requested = async () => (await t.db.query<{ run_requested_at: Date | null }>('SELECT run_requested_at FROM alerts WHERE id = $1', [alertId])).rows[0]!.run_requested_at;
  const claimDue = async () => {
    const runs = t.service.alertRuns;
    return claimDueAlert(t.db, runs.owner, await runs.graphs.servableEmbedded(t.db), runs.limits);
  };

  it('a request made before the run is answered by it, with the service\'s clock behind', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - SKEW_MS });
    expect((await t.admin.post(`/api/admin/clock/alerts/${alertId}/run`, {})).body).toEqual({ alreadyRunning: false });
    const claimed = await claimDue();
    expect(claimed).toMatchObject({ id: alertId, manual: true });
    expect((await runClaimedAlert(t.service.alertRuns, claimed!)).outcome).toBe('ok');
    // Answered: nothing asks for another run (the service's "started" was before the request, by its clock).
    expect(await requested()).toBeNull();
    expect(await claimDue()).toBeUndefined();
  });

  it('a request made during the run asks for another, with the service\'s clock ahead', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + SKEW_MS });
    const runs = t.service.alertRuns;
    const claimed = await claimAlert(t.db, runs.owner, alertId, runs.limits);
    expect(claimed).toBeDefined();
    // Asked for while the run is under way: after what the run read.
    expect((await t.admin.post(`/api/admin/clock/alerts/${alertId}/run`, {})).body).toEqual({ alreadyRunning: true });
    expect((await runClaimedAlert(runs, claimed!)).outcome).toBe('ok');
    expect(await requested()).not.toBeNull();
    const again = await claimDue();
    expect(again).toMatchObject({ id: alertId, manual: true });
    await runClaimedAlert(runs, again!);
    expect(await requested()).toBeNull();
  });
});
