import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOKS } from '../../src/limits.js';
import { sealSecret } from '../../src/secrets/secret-box.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { useTestService } from '../support/test-service.js';

const SECRET = 'a-secret-of-16ch';

describe('webhooks administration (docs/api.md, Webhooks)', () => {
  const t = useTestService();
  beforeAll(async () => {
    await createSource(t.admin, 'src');
  });

  it('creates a webhook subscribed to every event by default, never returning the secret', async () => {
    const response = await t.admin.post('/api/admin/webhooks', { url: 'https://receiver.example.com/hooks?team=1', secret: 'super-secret-value' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      url: 'https://receiver.example.com/hooks?team=1',
      description: '',
      // The Linkurious Enterprise events only: a client that knows no others gets no others.
      events: [{ eventType: 'newCase' }, { eventType: 'newMatch' }, { eventType: 'caseStatusChange' }],
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
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
      secret: 'sixteen-chars-ok',
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
    [{ secret: SECRET }, 'invalid_parameter', 'field url is required'],
    [{ url: 'ftp://example.com/x', secret: SECRET }, 'invalid_parameter', 'url must be http or https, got ftp'],
    [{ url: '/relative/path', secret: SECRET }, 'invalid_parameter', 'url "/relative/path" is not an absolute URL'],
    [{ url: 'https://user:pw@example.com/x', secret: SECRET }, 'invalid_parameter', 'url must not contain a user:password part; authenticate receivers with the secret'],
    [{ url: `https://example.com/${'x'.repeat(2048)}`, secret: SECRET }, 'invalid_parameter', 'field url must be at most 2048 characters long'],
    [{ url: 'https://example.com/x' }, 'invalid_parameter', 'field secret is required'],
    [{ url: 'https://example.com/x', secret: '' }, 'invalid_parameter', 'field secret must be at least 16 characters long'],
    [{ url: 'https://example.com/x', secret: ' ' }, 'invalid_parameter', 'field secret must be at least 16 characters long'],
    [{ url: 'https://example.com/x', secret: 'x'.repeat(15) }, 'invalid_parameter', 'field secret must be at least 16 characters long'],
    [{ url: 'https://example.com/x', secret: 'x'.repeat(1025) }, 'invalid_parameter', 'field secret must be at most 1024 characters long'],
    [{ url: 'https://example.com/x', secret: 42 }, 'invalid_parameter', 'field secret must be a string'],
    [{ url: 'https://example.com/x', secret: 'x'.repeat(16) }, 'invalid_parameter', 'secret must have at least 6 different characters: this one is easy to guess (generate one with: openssl rand -base64 32)'],
    [{ url: 'https://example.com/x', secret: SECRET, events: [] }, 'invalid_parameter', 'events must have at least 1 item (leave it out to subscribe to every event)'],
    [{ url: 'https://example.com/x', secret: SECRET, events: [{ eventType: 'caseDeleted' }] }, 'invalid_parameter', 'field events[0].eventType must be one of "newCase", "newMatch", "caseStatusChange", "webhookDisabled"'],
    [{ url: 'https://example.com/x', secret: SECRET, events: [{ sourceKey: 'src' }] }, 'invalid_parameter', 'field events[0].eventType is required'],
    [{ url: 'https://example.com/x', secret: SECRET, events: [{ eventType: 'newCase', sourceKey: 'nosuch' }] }, 'dataSource_unavailable', 'no data source has the key "nosuch"'],
  ])('refuses %j and creates nothing', async (body, key, message) => {
    const before = (await t.admin.get('/api/admin/webhooks')).body.items.length;
    const response = await t.admin.post('/api/admin/webhooks', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key, message, ...(key === 'invalid_parameter' ? { field: expect.any(String) } : {}) });
    expect(JSON.stringify(response.body)).not.toContain('x'.repeat(1025));
    expect((await t.admin.get('/api/admin/webhooks')).body.items.length).toBe(before);
  });

  it('takes a secret of exactly 16 characters', async () => {
    const response = await t.admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:8080/h', secret: '0123456789abcdef' });
    expect(response.status).toBe(201);
  });

  it('lists all webhooks as {items} without paging, and one page as {totalCount, items} with it', async () => {
    const all = (await t.admin.get('/api/admin/webhooks')).body;
    expect(Object.keys(all)).toEqual(['items']);
    expect(all.items.length).toBeGreaterThanOrEqual(3);
    const ids = all.items.map((w: { id: number }) => w.id);
    const first = await t.admin.get('/api/admin/webhooks?limit=2');
    expect(first.body).toEqual({ totalCount: ids.length, items: all.items.slice(0, 2) });
    const second = await t.admin.get('/api/admin/webhooks?offset=2&limit=1');
    expect(second.body.items.map((w: { id: number }) => w.id)).toEqual([ids[2]]);
    const fromOffset = await t.admin.get('/api/admin/webhooks?offset=1');
    expect(fromOffset.body.totalCount).toBe(ids.length);
    expect(fromOffset.body.items.map((w: { id: number }) => w.id)).toEqual(ids.slice(1, 21));
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'offset=01']) {
      const bad = await t.admin.get(`/api/admin/webhooks?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.message, query).toMatch(/^query parameter (offset|limit) must /);
    }
  });

  it('adds each webhook\'s delivery health to the list when asked (health=true): pending, failed, newest delivery', async () => {
    await createSource(t.admin, 'health');
    const alert = await createAlert(t.admin, 'health');
    const busy = await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'health' }] });
    const quiet = await createWebhook(t.admin, { events: [{ eventType: 'newCase', sourceKey: 'src' }] });
    await reportMatches(t.admin, 'health', alert.id, [{ nodes: ['a'] }, { nodes: ['b'] }, { nodes: ['c'] }]);
    const { rows } = await t.db.query<{ id: number }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id', [busy.id]);
    expect(rows).toHaveLength(3);
    await t.db.query(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, finished_at = now() WHERE id = $1`, [rows[0]!.id]);

    const listed = await t.admin.get('/api/admin/webhooks?health=true');
    expect(listed.status).toBe(200);
    const byId = new Map(listed.body.items.map((w: { id: number }) => [w.id, w]));
    expect(byId.get(busy.id)).toMatchObject({
      health: { pending: 2, failed: 1, lastDelivery: { id: rows[2]!.id, status: 'pending', eventType: 'newCase', at: expect.stringMatching(/Z$/) } },
    });
    expect(byId.get(quiet.id)).toMatchObject({ health: { pending: 0, failed: 0, lastDelivery: null } });
    expect(listed.body.items.every((w: { health?: unknown }) => w.health !== undefined)).toBe(true);
    // A page too; and without asking, the Linkurious Enterprise answer, unchanged.
    const paged = await t.admin.get(`/api/admin/webhooks?health=true&offset=${listed.body.items.length - 2}&limit=2`);
    expect(paged.body.items.map((w: { id: number; health: unknown }) => [w.id, w.health])).toEqual([busy, quiet].map((w) => [w.id, (byId.get(w.id) as { health: unknown }).health]));
    expect((await t.admin.get('/api/admin/webhooks')).body.items.some((w: object) => 'health' in w)).toBe(false);
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
    expect((await t.anonymous.post('/api/admin/webhooks', { url: 'https://e.com', secret: SECRET })).status).toBe(401);
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
        const response = await t.admin.request(method, url, method === 'POST' ? { url: 'https://e.com', secret: SECRET } : undefined);
        expect(response.status, `${method} ${url}`).toBe(403);
        expect(response.body.key).toBe('feature_disabled');
      }
    } finally {
      await t.admin.post('/api/config', { path: 'webhooks.enabled', configuration: true });
    }
    expect((await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).status).toBe(200);
  });
  it(`refuses webhook ${MAX_WEBHOOKS + 1}, before any work, even when creations race`, async () => {
    const count = async () => (await t.db.query<{ n: number }>('SELECT count(*) AS n FROM webhooks')).rows[0]!.n;
    // Filled to two short of the limit directly: through the API it would take a thousand calls.
    const missing = MAX_WEBHOOKS - 2 - (await count());
    // Sealed as the service seals (migration 0006 keeps no plain secret); one sealed value serves every filler.
    const sealed = sealSecret('filler-secret-value', t.service.keyring);
    await t.db.query(`INSERT INTO webhooks (url, secret_sealed) SELECT 'http://127.0.0.1:9/filler', $2 FROM generate_series(1, $1)`, [missing, sealed]);
    try {
      expect(await count()).toBe(MAX_WEBHOOKS - 2);
      // Ten at once for the last two places: exactly two get in.
      const answers = await Promise.all(Array.from({ length: 10 }, () => t.admin.post('/api/admin/webhooks', { url: 'http://127.0.0.1:9/hook', secret: SECRET })));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(2);
      for (const refused of answers.filter((a) => a.status !== 201)) {
        expect(refused.status).toBe(400);
        expect(refused.body).toEqual({
          key: 'invalid_parameter',
          message: `an installation may have at most ${MAX_WEBHOOKS} webhooks (every event is sent to each): delete one before adding another`,
        });
      }
      expect(await count()).toBe(MAX_WEBHOOKS);
      const subscriptions = await t.db.query<{ n: number }>('SELECT count(DISTINCT webhook_id) AS n FROM webhook_subscriptions');
      expect(subscriptions.rows[0]!.n).toBe(MAX_WEBHOOKS - missing);
      // The full list is still one answer; a page says how many there are.
      expect((await t.admin.get('/api/admin/webhooks?limit=1')).body.totalCount).toBe(MAX_WEBHOOKS);
    } finally {
      await t.db.query(`DELETE FROM webhooks WHERE url = 'http://127.0.0.1:9/filler'`);
    }
  });
});
