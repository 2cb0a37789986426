import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource, createWebhook } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('webhooks administration (contract §4)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    await createSource(t.admin, 'src');
  });
  afterAll(async () => t?.close());

  it('creates a webhook subscribed to every event by default, never returning the secret', async () => {
    const response = await t.admin.post('/api/admin/webhooks', { url: 'https://receiver.example.com/hooks?team=1', secret: 'super-secret-value' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      url: 'https://receiver.example.com/hooks?team=1',
      events: [{ eventType: 'newCase' }, { eventType: 'newMatch' }, { eventType: 'caseStatusChange' }],
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const listed = await t.admin.get('/api/admin/webhooks');
    expect(JSON.stringify(listed.body)).not.toContain('super-secret-value');
    expect(JSON.stringify(response.body)).not.toContain('super-secret-value');
  });

  it('keeps the given events in order, merging duplicates', async () => {
    const response = await t.admin.post('/api/admin/webhooks', {
      url: 'http://127.0.0.1:8080/h',
      secret: 's',
      events: [{ eventType: 'newCase', sourceKey: 'src' }, { eventType: 'caseStatusChange' }, { eventType: 'newCase', sourceKey: 'src' }],
    });
    expect(response.status).toBe(201);
    expect(response.body.events).toEqual([{ eventType: 'newCase', sourceKey: 'src' }, { eventType: 'caseStatusChange' }]);
  });

  it('lists webhooks oldest first', async () => {
    const a = await createWebhook(t.admin);
    const b = await createWebhook(t.admin);
    const ids = (await t.admin.get('/api/admin/webhooks')).body.items.map((w: { id: number }) => w.id);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    expect([...ids].sort((x: number, y: number) => x - y)).toEqual(ids);
  });

  it.each([
    [{ secret: 's' }, 'invalid_parameter', 'field url is required'],
    [{ url: 'ftp://example.com/x', secret: 's' }, 'invalid_parameter', 'url must be http or https, got ftp'],
    [{ url: '/relative/path', secret: 's' }, 'invalid_parameter', 'url "/relative/path" is not an absolute URL'],
    [{ url: 'https://user:pw@example.com/x', secret: 's' }, 'invalid_parameter', 'url must not contain a user:password part; authenticate receivers with the secret'],
    [{ url: `https://example.com/${'x'.repeat(2048)}`, secret: 's' }, 'invalid_parameter', 'field url must be at most 2048 characters long'],
    [{ url: 'https://example.com/x' }, 'invalid_parameter', 'field secret is required'],
    [{ url: 'https://example.com/x', secret: '' }, 'invalid_parameter', 'field secret must not be empty'],
    [{ url: 'https://example.com/x', secret: 'x'.repeat(1025) }, 'invalid_parameter', 'field secret must be at most 1024 characters long'],
    [{ url: 'https://example.com/x', secret: 42 }, 'invalid_parameter', 'field secret must be a string'],
    [{ url: 'https://example.com/x', secret: 's', events: [] }, 'invalid_parameter', 'events must have at least 1 item (leave it out to subscribe to every event)'],
    [{ url: 'https://example.com/x', secret: 's', events: [{ eventType: 'caseDeleted' }] }, 'invalid_parameter', 'field events[0].eventType must be one of "newCase", "newMatch", "caseStatusChange"'],
    [{ url: 'https://example.com/x', secret: 's', events: [{ sourceKey: 'src' }] }, 'invalid_parameter', 'field events[0].eventType is required'],
    [{ url: 'https://example.com/x', secret: 's', events: [{ eventType: 'newCase', sourceKey: 'nosuch' }] }, 'dataSource_unavailable', 'no data source has the key "nosuch"'],
  ])('refuses %j and creates nothing', async (body, key, message) => {
    const before = (await t.admin.get('/api/admin/webhooks')).body.items.length;
    const response = await t.admin.post('/api/admin/webhooks', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key, message });
    expect(JSON.stringify(response.body)).not.toContain('x'.repeat(1025));
    expect((await t.admin.get('/api/admin/webhooks')).body.items.length).toBe(before);
  });

  it('deletes a webhook (204), then answers 404 not_found', async () => {
    const hook = await createWebhook(t.admin);
    expect((await t.admin.delete(`/api/admin/webhooks/${hook.id}`)).status).toBe(204);
    const again = await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ key: 'not_found', message: `webhook ${hook.id} was not found` });
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).status).toBe(404);
  });

  it('needs Admin', async () => {
    const analyst = await t.userClient('ana');
    expect((await analyst.get('/api/admin/webhooks')).status).toBe(403);
    expect((await t.anonymous.post('/api/admin/webhooks', { url: 'https://e.com', secret: 's' })).status).toBe(401);
  });

  it('answers feature_disabled to every webhook operation while webhooks.enabled is false', async () => {
    const hook = await createWebhook(t.admin);
    await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: false });
    try {
      for (const [method, url] of [
        ['POST', '/api/admin/webhooks'],
        ['GET', '/api/admin/webhooks'],
        ['DELETE', `/api/admin/webhooks/${hook.id}`],
        ['GET', `/api/admin/webhooks/${hook.id}/deliveries`],
      ] as const) {
        const response = await t.admin.request(method, url, method === 'POST' ? { url: 'https://e.com', secret: 's' } : undefined);
        expect(response.status, `${method} ${url}`).toBe(403);
        expect(response.body.key).toBe('feature_disabled');
      }
    } finally {
      await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true });
    }
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).status).toBe(200);
  });
});
