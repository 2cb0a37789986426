import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProcessConfig } from '../../src/env.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { ADMIN_PASSWORD, ApiClient, openTestDatabase, secretsKeyEnv, signIn, type TestDatabase } from '../support/test-service.js';

const basic = (email: string, apiKey: string) => ({ authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` });

/** An API key acts for any user it names: what it does is recorded under its application, for all to see. */
describe('API keys: the application is visible in the action log, /me and the logs', () => {
  let testDb: TestDatabase;
  let service: Service;
  let admin: ApiClient;
  let analyst: ApiClient;
  const logLines: Record<string, unknown>[] = [];
  let application: { id: number; name: string; apiKey: string };
  let caseBase: string;

  beforeAll(async () => {
    testDb = await openTestDatabase();
    const config = readProcessConfig({ ADMIN_PASSWORD, PUBLIC_BASE_URL: 'https://lke.example.com', ROLE: 'api', ...secretsKeyEnv(testDb) });
    const logger = createLogger('info', { write: (line: string) => void logLines.push(JSON.parse(line)) });
    service = await startService({ config, logger, db: testDb.db });
    admin = await signIn(service.app, 'admin', ADMIN_PASSWORD);
    expect((await admin.post('/api/admin/users', { username: 'ana', email: 'ana@example.com', password: 'ana-password', groups: [2] })).status).toBe(201);
    analyst = await signIn(service.app, 'ana', 'ana-password');
    const created = await admin.post('/api/admin/applications', { name: 'case-sync', groups: [2] });
    expect(created.status).toBe(201);
    application = created.body;
    await createSource(admin, 'src');
    const alert = await createAlert(admin, 'src');
    const [kase] = await reportMatches(admin, 'src', alert.id, [{ nodes: ['n1'] }]);
    caseBase = `/api/src/alerts/${alert.id}/cases/${kase!.id}`;
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.dispose();
  });

  it('records the application with each case action made through the key, and lists it', async () => {
    const throughKey = new ApiClient(service.app, basic('ana@example.com', application.apiKey));
    expect((await throughKey.post(`${caseBase}/action`, { action: 'confirm', comment: 'synced' })).status).toBe(204);
    expect((await throughKey.post(`${caseBase}/action`, { action: 'comment', comment: 'from the tracker' })).status).toBe(204);
    expect((await analyst.post(`${caseBase}/action`, { action: 'comment', comment: 'by hand' })).status).toBe(204);

    const actions = await analyst.get(`${caseBase}/actions`);
    expect(actions.status).toBe(200);
    const ana = { id: expect.any(Number), username: 'ana', email: 'ana@example.com' };
    const app = { id: application.id, name: 'case-sync' };
    expect(actions.body.items).toEqual([
      expect.objectContaining({ action: 'confirm', user: ana, comment: 'synced', application: app }),
      expect.objectContaining({ action: 'comment', user: ana, comment: 'from the tracker', application: app }),
      expect.objectContaining({ action: 'comment', user: ana, comment: 'by hand' }),
    ]);
    // The action ana made herself names no application.
    expect(actions.body.items[2]).not.toHaveProperty('application');
  });

  it('keeps the record when the application is deleted afterwards', async () => {
    const other = (await admin.post('/api/admin/applications', { name: 'short-lived', groups: [2] })).body;
    const throughKey = new ApiClient(service.app, basic('ana@example.com', other.apiKey));
    expect((await throughKey.post(`${caseBase}/action`, { action: 'comment', comment: 'then deleted' })).status).toBe(204);
    expect((await admin.delete(`/api/admin/applications/${other.id}`)).status).toBe(204);
    const items = (await analyst.get(`${caseBase}/actions`)).body.items;
    expect(items.at(-1)).toMatchObject({ comment: 'then deleted', application: { id: other.id, name: 'short-lived' } });
  });

  it('answers /api/auth/me through a key with the user and the application; a session shows none', async () => {
    const me = await new ApiClient(service.app, basic('ana@example.com', application.apiKey)).get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: 'ana', application: { id: application.id, name: 'case-sync' } });
    const bySession = await analyst.get('/api/auth/me');
    expect(bySession.body.username).toBe('ana');
    expect(bySession.body).not.toHaveProperty('application');
  });

  it('puts the user and the application on the request log lines, and never the key', async () => {
    logLines.length = 0;
    const throughKey = new ApiClient(service.app, basic('ana@example.com', application.apiKey));
    expect((await throughKey.get('/api/auth/me')).status).toBe(200);
    const completed = logLines.find((line) => line.msg === 'request completed');
    expect(completed).toMatchObject({ userId: expect.any(Number), application: { id: application.id, name: 'case-sync' } });
    expect(JSON.stringify(logLines)).not.toContain(application.apiKey);
    // A session's lines name the user and no application.
    logLines.length = 0;
    await analyst.get('/api/auth/me');
    const bySession = logLines.find((line) => line.msg === 'request completed');
    expect(bySession).toMatchObject({ userId: expect.any(Number) });
    expect(bySession).not.toHaveProperty('application');
  });
});
