import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { readProcessConfig } from '../../src/config/env.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('errors (contract §0)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  it('has one catalogue of keys with their statuses', () => {
    expect(ERROR_STATUS).toEqual({
      invalid_parameter: 400,
      dataSource_unavailable: 400,
      unauthorized: 401,
      forbidden: 403,
      feature_disabled: 403,
      not_found: 404,
      api_not_found: 404,
      already_exists: 409,
      redundant_action: 409,
      payload_too_large: 413,
      too_many_requests: 429,
      bug: 500,
    });
  });

  it('answers an unknown route with 404 api_not_found', async () => {
    const response = await t.admin.get('/api/no/such/route?x=1');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ key: 'api_not_found', message: 'There is no route GET /api/no/such/route' });
  });

  it('answers malformed JSON with 400 invalid_parameter', async () => {
    const response = await t.admin.request('POST', '/api/admin/users', '{"username": "x",', { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(response.body.key).toBe('invalid_parameter');
    expect(response.body.message).toMatch(/^the body is not valid JSON/);
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const big = JSON.stringify({ username: 'x'.repeat(1024 * 1024 + 10), email: 'a@b', password: 'p' });
    const response = await t.admin.request('POST', '/api/admin/users', big, { 'content-type': 'application/json' });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ key: 'payload_too_large', message: 'the request body is larger than the limit of 1048576 bytes' });
  });

  it('answers a body that is not JSON with 415 invalid_parameter', async () => {
    const response = await t.admin.request('POST', '/api/admin/users', 'username=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({ key: 'invalid_parameter', message: 'the body must be application/json, got application/x-www-form-urlencoded' });
  });

  it('answers an unexpected error with 500 bug: no stack, no SQL', async () => {
    const config = readProcessConfig({ PUBLIC_BASE_URL: 'https://lke.example.com' });
    const logged: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void logged.push(line) });
    const app = await buildApp({ db: t.db, settings: t.service.settings, config, logger, worker: t.service.engine.worker });
    app.get('/api/test/explode', async () => {
      await t.db.query('SELECT * FROM table_that_does_not_exist');
    });
    await app.ready();
    try {
      const response = await app.inject({ method: 'GET', url: '/api/test/explode' });
      expect(response.statusCode).toBe(500);
      const body = response.json();
      expect(body.key).toBe('bug');
      expect(body.message).toMatch(/^An unexpected error occurred; the server log has the details under request id req-/);
      expect(response.body).not.toMatch(/table_that_does_not_exist|SELECT|at .*\.ts/);
      // The log has what the answer hides, under the same request id.
      const requestId = /request id (\S+)$/.exec(body.message)![1];
      expect(logged.some((line) => line.includes('table_that_does_not_exist') && line.includes(`"reqId":"${requestId}"`))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
