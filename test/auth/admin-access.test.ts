import { beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, useTestService } from '../support/test-service.js';

const basic = (email: string, apiKey: string) => ({ authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` });

describe('admin routes: sessions, API keys, 401 and 403', () => {
  const t = useTestService();
  let analyst: ApiClient;
  beforeAll(async () => {
    analyst = await t.userClient('ana');
  });

  it('lets an Admin session in', async () => {
    const response = await t.admin.get('/api/admin/users');
    expect(response.status).toBe(200);
    expect(response.body.items.map((u: { username: string }) => u.username)).toEqual(['admin', 'ana']);
  });

  it('answers 401 without a session, on every /api/admin/ path, known or not', async () => {
    for (const path of ['/api/admin/users', '/api/admin/applications', '/api/admin/webhooks', '/api/admin/no-such-thing']) {
      const response = await t.anonymous.get(path);
      expect(response.status, path).toBe(401);
      expect(response.body.key).toBe('unauthorized');
    }
  });

  it('answers 403 forbidden to a signed-in non-Admin, naming what was refused', async () => {
    const response = await analyst.get('/api/admin/users');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ key: 'forbidden', message: 'GET /api/admin/users needs the Admin group' });
    expect((await analyst.post('/api/config', { path: 'webhooks.enabled', configuration: false })).status).toBe(403);
  });

  it('shows an API key once, stores it hashed, and lets it act as the user with the key’s groups', async () => {
    const created = await t.admin.post('/api/admin/applications', { name: 'case-sync', groups: [1, 2] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'case-sync', enabled: true, rights: [], groups: [{ id: 1 }, { id: 2 }] });
    const apiKey: string = created.body.apiKey;
    expect(apiKey.length).toBeGreaterThanOrEqual(32);

    const listed = await t.admin.get('/api/admin/applications');
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0].apiKey).toBeUndefined();
    expect(JSON.stringify(listed.body)).not.toContain(apiKey);
    const { rows } = await t.db.query<{ api_key_hash: string }>('SELECT api_key_hash FROM applications');
    expect(rows[0]!.api_key_hash).not.toBe(apiKey);
    expect(rows[0]!.api_key_hash).toMatch(/^[0-9a-f]{64}$/);

    const asAdmin = new ApiClient(t.app, basic('admin@localhost', apiKey));
    expect((await asAdmin.get('/api/admin/users')).status).toBe(200);
    expect((await asAdmin.get('/api/auth/me')).body.username).toBe('admin');
  });

  it('gives Admin through a key only when both the user and the key are in Admin', async () => {
    const analystKey = (await t.admin.post('/api/admin/applications', { name: 'read-only', groups: [2] })).body.apiKey;
    const adminKey = (await t.admin.post('/api/admin/applications', { name: 'admin-key', groups: [1] })).body.apiKey;
    // An Admin user with an Analyst key: 403.
    const adminWithAnalystKey = new ApiClient(t.app, basic('admin@localhost', analystKey));
    expect((await adminWithAnalystKey.get('/api/admin/users')).status).toBe(403);
    expect((await adminWithAnalystKey.get('/api/auth/me')).body.groups).toEqual([]);
    // An Analyst user with an Admin key: 403.
    const analystWithAdminKey = new ApiClient(t.app, basic('ana@example.com', adminKey));
    expect((await analystWithAdminKey.get('/api/admin/users')).status).toBe(403);
  });

  it('answers 401 for a wrong key, an unknown email, a disabled key and a malformed header', async () => {
    const disabledKey = (await t.admin.post('/api/admin/applications', { name: 'off', groups: [1], enabled: false })).body.apiKey;
    const goodKey = (await t.admin.post('/api/admin/applications', { name: 'on', groups: [1] })).body.apiKey;
    const cases: Record<string, string>[] = [
      basic('admin@localhost', 'not-a-key'),
      basic('nobody@example.com', goodKey),
      basic('admin@localhost', disabledKey),
      { authorization: 'Basic !!!' },
    ];
    for (const headers of cases) {
      const response = await new ApiClient(t.app, headers).get('/api/admin/users');
      expect(response.status).toBe(401);
      expect(response.body.key).toBe('unauthorized');
    }
  });

  it('validates an application: groups must exist', async () => {
    const response = await t.admin.post('/api/admin/applications', { name: 'x', groups: [9] });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key: 'invalid_parameter', message: 'groups contains 9, which is not a group (1 = Admin, 2 = Analyst)', field: 'groups' });
  });
});
