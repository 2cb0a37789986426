import { beforeAll, describe, expect, it } from 'vitest';
import { claimDueDeliveries, recordAttempts, renewLeases } from '../../src/outbox/claims.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { useTestService } from '../support/test-service.js';

describe('claims and leases', () => {
  const t = useTestService();
  beforeAll(async () => {
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    await createWebhook(t.admin);
    await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['a'] }, { nodes: ['b'] }, { nodes: ['c'] }]);
  });

  it('claims each due delivery once, counts the attempt, and claims it again when its lease runs out', async () => {
    const first = await claimDueDeliveries(t.db, { limit: 10, leaseMs: 300 });
    expect(first).toHaveLength(3);
    expect(first.map((d) => d.attempts)).toEqual([1, 1, 1]);
    expect(first[0]!.payload).toMatch(/^\{"eventType":"newCase"/);
    // Claimed: not due while the lease runs.
    expect(await claimDueDeliveries(t.db, { limit: 10, leaseMs: 300 })).toEqual([]);
    const { rows } = await t.db.query<{ locked: number }>('SELECT count(*) AS locked FROM webhook_deliveries WHERE locked_until > now()');
    expect(rows[0]!.locked).toBe(3);

    await new Promise((resolve) => setTimeout(resolve, 400));
    const again = await claimDueDeliveries(t.db, { limit: 10, leaseMs: 60_000 });
    expect(again.map((d) => d.id)).toEqual(first.map((d) => d.id));
    expect(again.map((d) => d.attempts)).toEqual([2, 2, 2]);

    // The first claim's outcome arrives late: it belongs to a lapsed lease and changes nothing.
    const stale = first.map((d) => ({
      id: d.id,
      leaseToken: d.leaseToken,
      status: 'sent' as const,
      nextAttemptAt: null,
      attemptedAt: Date.now(),
      responseStatus: 204,
      error: null,
      logEntry: { attemptedAt: new Date().toISOString(), durationMs: 1, responseStatus: 204 },
    }));
    expect((await recordAttempts(t.db, stale)).recorded).toBe(0);
    // The current claim's outcome applies.
    expect((await recordAttempts(t.db, again.map((d, i) => ({ ...stale[i]!, leaseToken: d.leaseToken })))).recorded).toBe(3);
    const sent = await t.db.query<{ status: string; locked_until: Date | null }>('SELECT status, locked_until FROM webhook_deliveries');
    expect(sent.rows.every((r) => r.status === 'sent' && r.locked_until === null)).toBe(true);
  });

  it('renews the lease of a claim still held, and not of one whose lease passed to another claim', async () => {
    const alert = await createAlert(t.admin, 'src', { title: 'renewed' });
    await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['r1'] }, { nodes: ['r2'] }]);
    const held = await claimDueDeliveries(t.db, { limit: 10, leaseMs: 300 });
    expect(held).toHaveLength(2);
    // The first is renewed for a minute; the second is left to lapse, and is claimed again.
    expect(await renewLeases(t.db, [held[0]!], 60_000)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const again = await claimDueDeliveries(t.db, { limit: 10, leaseMs: 60_000 });
    expect(again.map((d) => d.id)).toEqual([held[1]!.id]);
    // The lapsed claim's renewal comes too late: the row's lease belongs to the new claim, and stays as it is.
    expect(await renewLeases(t.db, [held[1]!], 1)).toBe(0);
    const { rows } = await t.db.query<{ id: string; left: number }>(
      `SELECT id, extract(epoch FROM locked_until - now())::float8 AS left FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [held.map((d) => d.id)],
    );
    expect(rows.every((r) => r.left > 50)).toBe(true);
    // The attempt was counted once per claim, never by a renewal.
    expect(again[0]!.attempts).toBe(held[1]!.attempts + 1);
  });

  it('leaves webhooks at their bound to other workers', async () => {
    const alert = await createAlert(t.admin, 'src', { title: 'bound' });
    const other = await createWebhook(t.admin, { events: [{ eventType: 'newCase' }] });
    await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['x'] }]);
    const all = (await t.admin.get('/api/admin/webhooks')).body.items.map((w: { id: number }) => w.id);
    const claimed = await claimDueDeliveries(t.db, { limit: 10, leaseMs: 60_000, excludedWebhookIds: all.filter((id: number) => id !== other.id) });
    expect(claimed.map((d) => d.webhookId)).toEqual([other.id]);
  });
});

describe('schedules follow the settings', () => {
  const t = useTestService({ env: { ROLE: 'all' } });

  it('arms delivery and cleanup from the settings, re-arms on change, and stops on none or while disabled', async () => {
    const { delivery, cleanup } = t.service.engine;
    expect([delivery.pattern, cleanup.pattern]).toEqual(['* * * * *', '0 0 * * *']);
    await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: '*/2 * * * * *', cleanupFrequency: '30 3 * * *' } });
    expect([delivery.pattern, cleanup.pattern]).toEqual(['*/2 * * * * *', '30 3 * * *']);
    await t.admin.post('/api/config', { path: 'webhooks.cleanupFrequency', configuration: 'none' });
    expect(cleanup.pattern).toBe('none');
    await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false });
    expect([delivery.pattern, cleanup.pattern]).toEqual(['none', 'none']);
    await t.admin.post('/api/config', { path: 'webhooks', configuration: { enabled: true, cleanupFrequency: '0 0 * * *' } });
    expect([delivery.pattern, cleanup.pattern]).toEqual(['*/2 * * * * *', '0 0 * * *']);
  });

  it('sees a change made by another process (through the database)', async () => {
    // Another process's change: written straight to the database, as its SettingsStore would.
    await t.db.query(`UPDATE settings SET value = jsonb_set(value, '{deliveryFrequency}', '"*/5 * * * * *"') WHERE section = 'webhooks'`);
    await t.service.settings.refresh();
    expect(t.service.engine.delivery.pattern).toBe('*/5 * * * * *');
  });
});
