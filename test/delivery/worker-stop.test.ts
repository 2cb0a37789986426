import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TestReceiver, trickle } from '../support/receiver.js';
import { useTestService } from '../support/test-service.js';

describe('stopping the worker', () => {
  const t = useTestService();
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    await createWebhook(t.admin, { url: receiver.url });
    await reportMatches(t.admin, 'src', alert.id, Array.from({ length: 40 }, (_, i) => ({ nodes: [`stop-${i}`] })));
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('gives back what a claim in progress brought, and attempts nothing after the stop', async () => {
    // drain() runs up to its first await, the claim; stop() then lands while that claim is on its way.
    const worker = t.service.engine.worker;
    expect(worker.mode).toBe('idle');
    const draining = worker.drain();
    expect(worker.mode).toBe('draining');
    const stopping = worker.stop();
    expect(worker.mode).toBe('stopping');
    await stopping;
    expect(worker.mode).toBe('stopped');
    expect(await draining).toBe(0);
    expect(receiver.received).toHaveLength(0);
    const { rows } = await t.db.query<{ status: string; attempts: number; locked: boolean; due: boolean }>(
      'SELECT status, attempts, locked_until IS NOT NULL AS locked, next_attempt_at <= now() AS due FROM webhook_deliveries',
    );
    expect(rows).toHaveLength(40);
    // Nothing locked, nothing counted as attempted, everything due again for the next worker.
    expect(rows.every((r) => r.status === 'pending' && r.attempts === 0 && !r.locked && r.due)).toBe(true);
  });
});

describe('stopping the worker while a receiver trickles its answers', () => {
  const t = useTestService();
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = trickle(150); // headers at once, then 1 byte every 150 ms, never ending
    await t.admin.post('/api/config', { path: 'webhooks', configuration: { requestTimeoutMs: 1000, retryScheduleMs: [600_000] } });
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    await createWebhook(t.admin, { url: receiver.url, secret: 'worker-stop-secret', events: [{ eventType: 'newCase' }] });
    await reportMatches(t.admin, 'src', alert.id, Array.from({ length: 20 }, (_, i) => ({ nodes: [`trickle-${i}`] })));
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('ends within about the time-out: the attempts end at their deadline, their outcomes written, the rest given back', async () => {
    const worker = t.service.engine.worker;
    const draining = worker.drain();
    await receiver.waitFor(16, 5000); // the webhook's bound in flight, 4 more claimed behind them
    const stopping = Date.now();
    await worker.stop();
    expect(Date.now() - stopping).toBeLessThan(1000 + 2000);
    await draining;

    const { rows } = await t.db.query<{ status: string; attempts: number; locked: boolean; error: string | null }>(
      'SELECT status, attempts, locked_until IS NOT NULL AS locked, error FROM webhook_deliveries ORDER BY id',
    );
    const attempted = rows.filter((r) => r.attempts === 1);
    expect(attempted).toHaveLength(16);
    expect(attempted.every((r) => r.status === 'pending' && r.error === 'timed out after 1000 ms' && !r.locked)).toBe(true);
    const givenBack = rows.filter((r) => r.attempts === 0);
    expect(givenBack).toHaveLength(4);
    expect(givenBack.every((r) => r.status === 'pending' && !r.locked && r.error === null)).toBe(true);
  });
});
