import { beforeAll, describe, expect, it } from 'vitest';
import { AdvisoryLock } from '../../src/db/advisory-locks.js';
import { cleanupDeliveries } from '../../src/delivery/cleanup.js';
import { CLEANUP_BATCH } from '../../src/outbox/purge.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { useTestService } from '../support/test-service.js';

describe('cleanup (docs/api.md, Settings: cleanupFrequency)', () => {
  const t = useTestService();
  let alertId: number;
  let webhookId: number;
  beforeAll(async () => {
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
    webhookId = (await createWebhook(t.admin)).id;
  });

  /** `count` deliveries made to look `status` since `ageMs` ago. */
  async function deliveriesAged(status: 'sent' | 'failed' | 'pending', ageMs: number, count: number, tag: string): Promise<number[]> {
    const cases = await reportMatches(t.admin, 'src', alertId, Array.from({ length: count }, (_, i) => ({ nodes: [`${tag}-${i}`] })));
    const { rows } = await t.db.query<{ id: number }>(
      `UPDATE webhook_deliveries d SET status = $1,
         finished_at = CASE WHEN $1 = 'pending' THEN NULL ELSE now() - $2 * interval '1 millisecond' END,
         sent_date = CASE WHEN $1 = 'sent' THEN now() - $2 * interval '1 millisecond' END,
         next_attempt_at = CASE WHEN $1 = 'pending' THEN now() + interval '1 hour' END
       FROM webhook_events e WHERE e.id = d.event_id AND e.payload LIKE ANY($3::text[]) RETURNING d.id`,
      [status, ageMs, cases.map((c) => `%"case":{"id":${c.id},%`)],
    );
    expect(rows).toHaveLength(count);
    return rows.map((r) => r.id);
  }
  const remaining = async (ids: number[]) =>
    (await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_deliveries WHERE id = ANY($1::bigint[])', [ids])).rows[0]!.count;

  it('removes sent deliveries past deliveryRetentionDelayMs and failed ones past failedDeliveryRetentionDelayMs, keeping the rest', async () => {
    const day = 86_400_000;
    const oldSent = await deliveriesAged('sent', 2 * day, 3, 'old-sent');
    const newSent = await deliveriesAged('sent', day / 2, 2, 'new-sent');
    const oldFailed = await deliveriesAged('failed', 8 * day, 2, 'old-failed');
    const newFailed = await deliveriesAged('failed', 2 * day, 2, 'new-failed');
    const pending = await deliveriesAged('pending', 30 * day, 2, 'pending');
    const events = async () => (await t.db.query<{ count: number }>('SELECT count(*) AS count FROM webhook_events')).rows[0]!.count;
    const eventsBefore = await events();

    const result = await cleanupDeliveries(t.db, t.service.settings.webhooks);
    expect(result).toEqual({ ran: true, sent: 3, failed: 2, runs: 0, audit: 0 });
    expect(await remaining(oldSent)).toBe(0);
    expect(await remaining(oldFailed)).toBe(0);
    expect(await remaining(newSent)).toBe(2);
    expect(await remaining(newFailed)).toBe(2);
    expect(await remaining(pending)).toBe(2);
    // The payloads of the removed deliveries went with them.
    expect(await events()).toBe(eventsBefore - 5);
    const listed = (await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries?limit=1000`)).body;
    expect(listed.totalCount).toBe(6);
  });

  it('follows the retention settings', async () => {
    const ids = await deliveriesAged('sent', 60_000, 2, 'minute-old');
    await t.admin.post('/api/config', { path: 'webhooks.deliveryRetentionDelayMs', configuration: 30_000 });
    expect((await cleanupDeliveries(t.db, t.service.settings.webhooks)).sent).toBeGreaterThanOrEqual(2);
    expect(await remaining(ids)).toBe(0);
  });

  it('works through more rows than one batch', async () => {
    await t.admin.post('/api/config', { path: 'webhooks.deliveryRetentionDelayMs', configuration: 0 });
    const { rows } = await t.db.query<{ id: number }>('SELECT id FROM webhook_events ORDER BY id LIMIT 1');
    // Many deliveries of one event: cheap to make, and each a row to delete.
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, status, sent_date, finished_at)
       SELECT $1, $2, 'sent', now() - interval '1 hour', now() - interval '1 hour' FROM generate_series(1, $3)`,
      [webhookId, rows[0]!.id, CLEANUP_BATCH + 123],
    );
    const result = await cleanupDeliveries(t.db, t.service.settings.webhooks);
    expect(result.sent).toBeGreaterThanOrEqual(CLEANUP_BATCH + 123);
    expect((await t.db.query<{ count: number }>(`SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'sent'`)).rows[0]!.count).toBe(0);
  });

  it('runs on one process at a time (PostgreSQL: an advisory lock; the embedded database serves one process)', async () => {
    if (t.db.kind === 'pglite') {
      // One process, one connection: two runs at once simply take turns.
      const [a, b] = await Promise.all([cleanupDeliveries(t.db, t.service.settings.webhooks), cleanupDeliveries(t.db, t.service.settings.webhooks)]);
      expect(a.ran && b.ran).toBe(true);
      return;
    }
    await t.db.withConnection(async (holder) => {
      await holder.query('SELECT pg_advisory_lock($1)', [AdvisoryLock.cleanup]);
      try {
        expect(await cleanupDeliveries(t.db, t.service.settings.webhooks)).toEqual({ ran: false, sent: 0, failed: 0, runs: 0, audit: 0 });
      } finally {
        await holder.query('SELECT pg_advisory_unlock($1)', [AdvisoryLock.cleanup]);
      }
    });
    expect((await cleanupDeliveries(t.db, t.service.settings.webhooks)).ran).toBe(true);
  });
});
