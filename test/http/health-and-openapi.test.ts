import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';

describe('health and the OpenAPI document', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  it('answers /health 200 while the database answers', async () => {
    const response = await t.anonymous.get('/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('describes every route in /api/openapi.json', async () => {
    const response = await t.anonymous.get('/api/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    const paths = Object.keys(response.body.paths);
    for (const path of ['/health', '/api/auth/login', '/api/auth/me', '/api/auth/logout', '/api/admin/users', '/api/admin/users/{id}', '/api/admin/applications', '/api/config']) {
      expect(paths, path).toContain(path);
    }
    expect(response.body.paths['/api/admin/users'].post.requestBody.content['application/json'].schema.required).toEqual(['username', 'email', 'password']);
  });

  it('answers /health 503 when the database does not', async () => {
    // Last test of the file: it closes this service's database.
    await t.db.close();
    const response = await t.anonymous.get('/health');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: 'unavailable', message: 'the database does not answer' });
  });
});
