import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** The failure streak a console shows at a glance: `failingSince`, in the read of one webhook and in the list. */
describe('a webhook’s failure streak', () => {
  let t: TestService;
  let receiver: TestReceiver;

  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
    await createSource(t.admin, 'streak');
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { retryScheduleMs: [0] } })).status).toBe(204);
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('starts at the first failed attempt, is kept while attempts fail, and ends with a success', async () => {
    const alert = await createAlert(t.admin, 'streak');
    const hook = await createWebhook(t.admin, { url: receiver.url, events: [{ eventType: 'newCase', sourceKey: 'streak' }] });
    const failingSince = async () => {
      const one = (await t.admin.get(`/api/admin/webhooks/${hook.id}`)).body.failingSince as string | null;
      const listed = (await t.admin.get('/api/admin/webhooks')).body.items.find((w: { id: number }) => w.id === hook.id).failingSince;
      expect(listed).toBe(one);
      return one;
    };
    expect(await failingSince()).toBeNull();

    receiver.behaviour = answer(500);
    const before = Date.now();
    await reportMatches(t.admin, 'streak', alert.id, [{ nodes: ['s1'] }]);
    await t.service.engine.worker.drain(); // the attempt and its retry (a step of 0) both fail
    const first = await failingSince();
    expect(first).not.toBeNull();
    expect(Date.parse(first!)).toBeGreaterThanOrEqual(before - 1000);
    await reportMatches(t.admin, 'streak', alert.id, [{ nodes: ['s2'] }]);
    await t.service.engine.worker.drain();
    expect(await failingSince()).toBe(first); // still the same streak

    receiver.behaviour = answer(204);
    await reportMatches(t.admin, 'streak', alert.id, [{ nodes: ['s3'] }]);
    await t.service.engine.worker.drain();
    expect(await failingSince()).toBeNull();
  });
});
