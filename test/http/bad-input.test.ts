import { beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook } from '../support/fixtures.js';
import { ApiClient, useTestService } from '../support/test-service.js';

const json = { 'content-type': 'application/json' };
const DIGITS_ONLY = 'must be a whole number in plain decimal digits (no sign, leading zero, space, exponent or hex)';

describe('bad input is a 400 naming the field, never a 500 (issue 8, items 9 and 13)', () => {
  const t = useTestService();
  let alertId: number;
  let webhookId: number;
  beforeAll(async () => {
    await createSource(t.admin, 'src');
    alertId = (await createAlert(t.admin, 'src')).id;
    webhookId = (await createWebhook(t.admin)).id;
  });

  describe('U+0000 and other text PostgreSQL cannot store', () => {
    it('refuses U+0000 in a sign-in, before anything is looked up', async () => {
      const response = await t.anonymous.request('POST', '/api/auth/login', '{"usernameOrEmail":"\\u0000","password":"x"}', json);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ key: 'invalid_parameter', message: 'field usernameOrEmail must not contain the character U+0000' });
    });

    it('names the nested field, and changes nothing', async () => {
      const body = '{"matches":[{"nodes":["a","b","c","d\\u0000"]}]}';
      const response = await t.admin.request('POST', `/api/admin/src/alerts/${alertId}/matches`, body, json);
      expect(response.body).toEqual({ key: 'invalid_parameter', message: 'field matches[0].nodes[3] must not contain the character U+0000' });
      expect((await t.admin.get(`/api/src/alerts/${alertId}/cases`)).body.cases).toEqual([]);
    });

    it('refuses U+0000 in a key, and a lone surrogate anywhere', async () => {
      const key = await t.admin.request('POST', '/api/admin/users', '{"username":"x","em\\u0000ail":"y"}', json);
      expect(key.body).toEqual({ key: 'invalid_parameter', message: 'a key of the body must not contain the character U+0000' });
      const surrogate = await t.admin.request('POST', '/api/admin/users', '{"username":"a\\ud800","email":"a@example.com","password":"password-1"}', json);
      expect(surrogate.body).toEqual({ key: 'invalid_parameter', message: 'field username must be valid Unicode (it holds a lone surrogate)' });
      expect((await t.admin.get('/api/admin/users')).body.items).toHaveLength(1);
    });

    it('refuses %00 in a path parameter', async () => {
      const response = await t.admin.get('/api/src%00/alerts');
      expect(response.body).toEqual({ key: 'invalid_parameter', message: 'path parameter sourceKey must match ^[A-Za-z0-9_-]{1,64}$', field: 'sourceKey' });
      const id = await t.admin.delete('/api/admin/users/1%00');
      expect(id.body).toEqual({ key: 'invalid_parameter', message: `path parameter id ${DIGITS_ONLY}, got "1\\u0000"`, field: 'id' });
    });

    it('refuses %00 and a lone surrogate in a query parameter, on a route that searches with it', async () => {
      const nul = await t.admin.get('/api/admin/webhooks?q=%00');
      expect(nul.status).toBe(400);
      expect(nul.body).toEqual({ key: 'invalid_parameter', message: 'query parameter q must not contain the character U+0000', field: 'q' });
      const surrogate = await t.admin.get('/api/admin/webhooks?q=a%ED%A0%80');
      expect(surrogate.status).toBeLessThan(500);
      expect((await t.admin.get('/api/admin/webhooks?q=example')).status).toBe(200);
    });

    it('answers 401, not 500, to an API key header whose email holds U+0000', async () => {
      const apiKey = (await t.admin.post('/api/admin/applications', { name: 'k', groups: [1] })).body.apiKey;
      const client = new ApiClient(t.app, { authorization: `Basic ${Buffer.from(`admin@localhost\u0000:${apiKey}`).toString('base64')}` });
      const response = await client.get('/api/auth/me');
      expect(response.status).toBe(401);
      expect(response.body.key).toBe('unauthorized');
    });
  });

  describe('numbers out of range', () => {
    it.each([
      [`/deliveries?offset=1e20`, `query parameter offset ${DIGITS_ONLY}, got "1e20"`],
      [`/deliveries?offset=100000000000000000000`, 'query parameter offset must be <= 2147483647'],
      [`/deliveries/Infinity`, `path parameter deliveryId ${DIGITS_ONLY}, got "Infinity"`],
      [`/deliveries/9223372036854775808`, 'path parameter deliveryId must be <= 9007199254740991'],
      [`/deliveries/-1`, `path parameter deliveryId ${DIGITS_ONLY}, got "-1"`],
    ])('GET /api/admin/webhooks/:id%s → 400', async (suffix, message) => {
      const response = await t.admin.get(`/api/admin/webhooks/${webhookId}${suffix}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ key: 'invalid_parameter', message, field: expect.any(String) });
    });

    it('refuses an id too large for its column in a body', async () => {
      const response = await t.admin.post('/api/admin/users', { username: 'big', email: 'big@example.com', password: 'password-1', groups: [1e20] });
      expect(response.body).toEqual({ key: 'invalid_parameter', message: 'field groups[0] must be <= 2147483647', field: 'groups[0]' });
    });
  });

  describe('nesting', () => {
    it('refuses a body nested deeper than 64 levels, without overflowing the stack, and changes nothing', async () => {
      const before = (await t.admin.get('/api/config')).body;
      for (const depth of [65, 100_000]) {
        const body = `{"path":"webhooks","configuration":${'['.repeat(depth)}${']'.repeat(depth)}}`;
        const response = await t.admin.request('POST', '/api/config', body, json);
        expect(response.status, `depth ${depth}`).toBe(400);
        expect(response.body.key).toBe('invalid_parameter');
        expect(response.body.message).toMatch(/^field configuration(\[0\]){63} nests arrays and objects deeper than 64 levels$/);
      }
      expect((await t.admin.get('/api/config')).body).toEqual(before);
      // 64 levels are read, and answered by the settings' own rules.
      const deepest = await t.admin.request('POST', '/api/config', `{"path":"webhooks.retryScheduleMs","configuration":${'['.repeat(63)}${']'.repeat(63)}}`, json);
      expect(deepest.body).toEqual({ key: 'invalid_parameter', message: 'webhooks.retryScheduleMs[0] must be an integer from 0 to 604800000, got [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]', field: 'webhooks.retryScheduleMs[0]' });
    });
  });

  describe('ids and counts in canonical decimal only', () => {
    it.each(['1%20', '%201', '+1', '00001', '0x10', '1.0', '1e0', '-0', '1_0'])('refuses user id %s and changes nothing', async (id) => {
      const response = await t.admin.delete(`/api/admin/users/${id}`);
      expect(response.status).toBe(400);
      expect(response.body.key).toBe('invalid_parameter');
      expect(response.body.message).toMatch(new RegExp(`^path parameter id ${DIGITS_ONLY.replace(/[()]/g, '\\$&')}, got "`));
      expect((await t.admin.get('/api/admin/users')).body.items.map((u: { id: number }) => u.id)).toEqual([1]);
    });

    it.each([
      ['offset=1e3', 'offset'],
      ['offset=-0', 'offset'],
      ['offset=+1', 'offset'],
      ['limit=01', 'limit'],
      ['limit=1.0', 'limit'],
      ['limit=0x10', 'limit'],
      ['limit=1&limit=2', 'limit'],
    ])('refuses ?%s naming %s', async (query, name) => {
      const response = await t.admin.get(`/api/src/alerts/${alertId}/cases?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(new RegExp(`^query parameter ${name} must be a whole number`));
    });

    it('takes canonical ids and counts', async () => {
      expect((await t.admin.get(`/api/src/alerts/${alertId}/cases?offset=0&limit=10`)).status).toBe(200);
      expect((await t.admin.get(`/api/src/alerts/${alertId}`)).body.id).toBe(alertId);
      expect((await t.admin.get(`/api/src/alerts/0${alertId}`)).status).toBe(400);
      expect((await t.admin.get(`/api/admin/webhooks/${webhookId}/deliveries/1`)).body).toEqual({ key: 'not_found', message: 'delivery 1 was not found' });
    });
  });
});
