import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('stopping the worker', () => {
  let t: TestService;
  let receiver: TestReceiver;
  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    await createWebhook(t.admin, { url: receiver.url });
    await reportMatches(t.admin, 'src', alert.id, Array.from({ length: 40 }, (_, i) => ({ nodes: [`stop-${i}`] })));
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('gives back what a claim in progress brought, and attempts nothing after the stop', async () => {
    // drain() runs up to its first await, the claim; stop() then lands while that claim is on its way.
    const draining = t.service.engine.worker.drain();
    await t.service.engine.worker.stop();
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
