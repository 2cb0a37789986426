import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/test-service.js';

describe('health and the OpenAPI document', () => {
  const t = useTestService();

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

  it('answers /health 200 while long transactions take up the database (PostgreSQL: every pooled connection)', async () => {
    // PGlite runs one statement at a time, so one long transaction holds it all; PostgreSQL's pool has 10
    // connections (the test database's default), and a burst of long calls can take every one of them.
    const count = t.db.kind === 'postgres' ? 10 : 1;
    let running = 0;
    let finished = false;
    const began: Promise<void>[] = [];
    const transactions = Array.from({ length: count }, (_, i) => {
      let begun!: () => void;
      began.push(new Promise<void>((resolve) => (begun = resolve)));
      return t.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO data_sources (key, name) VALUES ($1, 'Busy')`, [`busy${String(i).padStart(4, '0')}`]);
        running++;
        begun();
        await tx.query('SELECT pg_sleep(5)');
      });
    });
    const all = Promise.all(transactions).finally(() => (finished = true));
    try {
      await Promise.all(began);
      expect(running).toBe(count);
      const response = await t.anonymous.get('/health');
      // Answered while the transactions still ran, not once they had ended.
      expect(finished).toBe(false);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    } finally {
      await all;
    }
  });

  it('answers /health 503 when the database does not', async () => {
    // Last test of the file: it closes this service's database.
    await t.db.close();
    const response = await t.anonymous.get('/health');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: 'unavailable', message: 'the database does not answer' });
  });
});
