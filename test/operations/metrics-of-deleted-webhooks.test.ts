import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existingWebhookIds } from '../../src/webhooks/webhooks.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createWebhook } from '../support/fixtures.js';
import { TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

// A webhook's series (attempt counters by outcome, the duration histogram: 18 in all) go when it is deleted: at
// once in the process that deletes it, at the next pruning scrape in the others.
describe('metrics of deleted webhooks', () => {
  let t: TestService;
  let receiver: TestReceiver;
  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  const seriesOf = (text: string, webhookId: number) => text.split('\n').filter((line) => line.includes(`webhook="${webhookId}"`));
  const scrape = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;

  it('removes a webhook’s series when it is deleted through this process', async () => {
    const kept = await createWebhook(t.admin, { url: receiver.url });
    const deleted = await createWebhook(t.admin, { url: receiver.url });
    for (const { id } of [kept, deleted]) expect((await t.admin.post(`/api/admin/webhooks/${id}/ping`)).status).toBe(200);
    expect(seriesOf(await scrape(), deleted.id).length).toBeGreaterThanOrEqual(15);

    expect((await t.admin.delete(`/api/admin/webhooks/${deleted.id}`)).status).toBe(204);
    const after = await scrape();
    expect(seriesOf(after, deleted.id)).toEqual([]);
    expect(seriesOf(after, kept.id).length).toBeGreaterThanOrEqual(15);
  });

  it('drops, at a scrape, the series of webhooks deleted elsewhere', async () => {
    const existing = await createWebhook(t.admin, { url: receiver.url });
    // A worker process's registry: attempts of a webhook that exists and of one another process deleted.
    const metrics = new Metrics({ existingWebhooks: (ids) => existingWebhookIds(t.db, ids), defaultMetrics: false });
    const gone = existing.id + 1000;
    metrics.attempt(existing.id, 'sent', 0.01);
    metrics.attempt(gone, 'failed', 0.01);
    const text = await metrics.registry.metrics();
    expect(seriesOf(text, gone)).toEqual([]);
    expect(seriesOf(text, existing.id).length).toBeGreaterThanOrEqual(15);
  });
});
