import type { AddressInfo } from 'node:net';
import { RestClient } from '@linkurious/rest-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { ADMIN_PASSWORD, startTestService, type TestService } from '../support/test-service.js';

/**
 * Linkurious Enterprise's own client, `@linkurious/rest-client`, unchanged, against the real service over HTTP:
 * what an LKE integration does with webhooks keeps working now that webhooks have more to them (issue 10).
 */
describe('@linkurious/rest-client against the service', () => {
  let t: TestService;
  let receiver: TestReceiver;
  let client: RestClient;

  beforeAll(async () => {
    t = await startTestService();
    receiver = await TestReceiver.start();
    receiver.behaviour = answer(204);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new RestClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('signs in, creates, lists, pings, reads deliveries and deletes a webhook', async () => {
    const login = await client.auth.login({ usernameOrEmail: 'admin', password: ADMIN_PASSWORD });
    expect(login.isSuccess(), JSON.stringify(login.body)).toBe(true);

    await createSource(t.admin, 'lke');
    const created = await client.webhook.createWebhook({ url: receiver.url, secret: 'an-lke-webhook-secret', events: [{ eventType: 'newCase', sourceKey: 'lke' }] });
    expect(created.isSuccess(), JSON.stringify(created.body)).toBe(true);
    expect(created.status).toBe(201);
    const webhook = created.body as { id: number; url: string; events: unknown[]; createdAt: string; updatedAt: string };
    expect(webhook).toMatchObject({ id: expect.any(Number), url: receiver.url, events: [{ eventType: 'newCase', sourceKey: 'lke' }] });
    expect(JSON.stringify(webhook)).not.toContain('an-lke-webhook-secret');

    const listed = await client.webhook.getWebhooks();
    expect(listed.isSuccess()).toBe(true);
    const items = (listed.body as { items: { id: number }[] }).items;
    expect(Object.keys(listed.body as object)).toEqual(['items']);
    expect(items.map((w) => w.id)).toContain(webhook.id);

    const ping = await client.webhook.pingWebhook({ webhookId: webhook.id });
    expect(ping.isSuccess(), JSON.stringify(ping.body)).toBe(true);
    expect(ping.body).toMatchObject({ webhookId: webhook.id, payload: { eventType: 'ping' }, sentDate: expect.any(String) });

    const alert = await createAlert(t.admin, 'lke');
    await reportMatches(t.admin, 'lke', alert.id, [{ nodes: ['1', '2'] }]);
    await t.service.engine.worker.drain();
    const deliveries = await client.webhook.getWebhookDeliveries({ webhookId: webhook.id, offset: 0, limit: 10 });
    expect(deliveries.isSuccess(), JSON.stringify(deliveries.body)).toBe(true);
    const page = deliveries.body as { totalCount: number; items: { webhookId: number; payload: { eventType: string; sourceKey?: string }; sentDate: string | null }[] };
    expect(page.totalCount).toBe(2);
    expect(page.items.map((d) => d.payload.eventType)).toEqual(['newCase', 'ping']);
    expect(page.items[0]).toMatchObject({ webhookId: webhook.id, payload: { sourceKey: 'lke' }, sentDate: expect.any(String) });

    const deleted = await client.webhook.deleteWebhook({ webhookId: webhook.id });
    expect(deleted.status).toBe(204);
    const after = await client.webhook.getWebhooks();
    expect((after.body as { items: { id: number }[] }).items.map((w) => w.id)).not.toContain(webhook.id);
    const gone = await client.webhook.getWebhookDeliveries({ webhookId: webhook.id });
    expect(gone.status).toBe(404);
  });

  it('signs out with its GET, after which its session is refused', async () => {
    const loggedOut = await client.auth.logout();
    expect(loggedOut.isSuccess(), JSON.stringify(loggedOut.body)).toBe(true);
    expect((await client.webhook.getWebhooks()).status).toBe(401);
  });
});
