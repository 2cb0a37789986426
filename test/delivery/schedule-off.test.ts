import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

const TOTAL = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ROLE=all: the process's own schedule, every second, drains; the setting changes through the API, as an admin would.
describe('turning the delivery schedule off stops a drain under way', () => {
  const t = useTestService({ env: { ROLE: 'all', DELIVERY_CONCURRENCY_PER_WEBHOOK: '4' } });
  let receiver: TestReceiver;
  beforeAll(async () => {
    // 4 attempts at a time to one webhook answering in 50 ms: the drain of TOTAL takes about 5 s.
    receiver = await TestReceiver.start();
    receiver.behaviour = (request, index, response) => void setTimeout(() => answer(204)(request, index, response), 50);
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    await createWebhook(t.admin, { url: receiver.url, secret: 'schedule-off-secret', events: [{ eventType: 'newCase' }] });
    for (let batch = 0; batch < TOTAL / 100; batch++) {
      await reportMatches(t.admin, 'src', alert.id, Array.from({ length: 100 }, (_, i) => ({ nodes: [`off-${batch}-${i}`] })));
    }
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const setFrequency = async (deliveryFrequency: string) => {
    const response = await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: deliveryFrequency });
    expect(response.status).toBe(204);
  };

  it('claims nothing within a second of "none", loses nothing, and sends the rest once it is on again', async () => {
    await setFrequency('* * * * * *');
    await receiver.waitFor(40, 10_000);
    await setFrequency('none');
    await sleep(1000);
    // The drain under way finished its attempts in flight and ended.
    expect(t.service.engine.worker.mode).toBe('paused');
    const soon = receiver.received.length;
    await sleep(2000);
    // Nothing new went out after the first second (attempts already in flight end within 50 ms).
    expect(receiver.received.length).toBe(soon);
    expect(soon).toBeLessThan(TOTAL);

    // Nothing lost: the rest is pending, due, not held by a lease, its attempts uncounted.
    const { rows } = await t.db.query<{ status: string; n: number; attempts: number; locked: number }>(
      `SELECT status, count(*)::int AS n, sum(attempts)::int AS attempts, count(*) FILTER (WHERE locked_until IS NOT NULL)::int AS locked
       FROM webhook_deliveries GROUP BY status ORDER BY status`,
    );
    expect(rows).toEqual([
      { status: 'pending', n: TOTAL - soon, attempts: 0, locked: 0 },
      { status: 'sent', n: soon, attempts: soon, locked: 0 },
    ]);

    // On again: the rest goes out, each delivery once.
    await setFrequency('* * * * * *');
    expect(['idle', 'draining']).toContain(t.service.engine.worker.mode);
    await receiver.waitFor(TOTAL, 30_000);
    await sleep(200);
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(TOTAL);
    expect(new Set(ids).size).toBe(TOTAL);
  });
});
