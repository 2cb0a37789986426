import { describe, expect, it } from 'vitest';
import { REDELIVER_BATCH_SIZE, redeliverFailed } from '../../src/outbox/redeliver-many.js';
import { useTestDatabase } from '../support/test-service.js';

// The batched statement under `deliveries redeliver --failed` (and, later, the bulk redeliver routes).
describe('redeliverFailed', () => {
  const testDb = useTestDatabase();

  it('makes every matching failed delivery pending and due now over several batches, once, and leaves the rest', async () => {
    const { db } = testDb;
    const failed = REDELIVER_BATCH_SIZE * 2 + 123;
    // No foreign keys on the queue (see migration 0003): rows of webhooks 1 and 2 with any event id will do.
    await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, status, attempts, lease_token, finished_at, updated_at)
       SELECT CASE WHEN i <= $1 THEN 1 ELSE 2 END, i, 'failed', 8, 3, now() - interval '1 hour', now() - interval '1 hour'
       FROM generate_series(1, $1 + 10) AS i`,
      [failed],
    );
    await db.query(`INSERT INTO webhook_deliveries (webhook_id, event_id, status, finished_at) SELECT 1, i, 'sent', now() FROM generate_series(1, 5) AS i`);

    expect(await redeliverFailed(db, { webhookIds: [1], since: new Date(Date.now() + 60_000) })).toBe(0);
    expect(await redeliverFailed(db, { webhookIds: [1] })).toBe(failed);
    expect(await redeliverFailed(db, { webhookIds: [1] })).toBe(0);
    const { rows } = await db.query<{ webhook_id: number; status: string; n: number; reset: boolean }>(
      `SELECT webhook_id, status, count(*)::int AS n,
              bool_and(attempts = 0 AND lease_token = 4 AND next_attempt_at <= now() AND finished_at IS NULL AND locked_until IS NULL) AS reset
       FROM webhook_deliveries GROUP BY webhook_id, status ORDER BY webhook_id, status`,
    );
    expect(rows).toEqual([
      { webhook_id: 1, status: 'pending', n: failed, reset: true },
      { webhook_id: 1, status: 'sent', n: 5, reset: false },
      { webhook_id: 2, status: 'failed', n: 10, reset: false },
    ]);
  }, 60_000);
});
