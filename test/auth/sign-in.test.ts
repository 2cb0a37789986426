import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ApiClient, startTestService, type TestService } from '../support/test-service.js';

describe('sign-in', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  it('signs in by username and answers the user without any password', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
    expect(response.statusCode).toBe(200);
    const user = response.json();
    expect(user).toMatchObject({ id: 1, username: 'admin', email: 'admin@localhost', groups: [{ id: 1, name: 'Admin', builtin: true }] });
    expect(user.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(user)).not.toMatch(/password|hash|scrypt/i);
    const cookie = response.cookies.find((c) => c.name === 'aw.sid')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    // PUBLIC_BASE_URL is https in the tests: the cookie is Secure.
    expect(cookie.secure).toBe(true);
  });

  it('signs in by email, case-insensitively', async () => {
    const response = await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'ADMIN@localhost', password: ADMIN_PASSWORD });
    expect(response.status).toBe(200);
    expect(response.body.username).toBe('admin');
  });

  it('refuses a wrong password and an unknown user with the same 401', async () => {
    const wrongPassword = await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'admin', password: 'not-the-password' });
    const unknownUser = await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'nobody', password: 'not-the-password' });
    expect(wrongPassword.status).toBe(401);
    expect(unknownUser.status).toBe(401);
    expect(wrongPassword.body).toEqual({ key: 'unauthorized', message: 'wrong username, email or password' });
    expect(unknownUser.body).toEqual(wrongPassword.body);
  });

  it('answers /api/auth/me for the session, and 401 without one', async () => {
    expect((await t.admin.get('/api/auth/me')).body.username).toBe('admin');
    const anonymous = await t.anonymous.get('/api/auth/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.key).toBe('unauthorized');
  });

  it('logs out: 204, and the session no longer works', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
    const session = new ApiClient(t.app, { cookie: `aw.sid=${response.cookies.find((c) => c.name === 'aw.sid')!.value}` });
    expect((await session.get('/api/auth/me')).status).toBe(200);
    const logout = await session.get('/api/auth/logout');
    expect(logout.status).toBe(204);
    expect((await session.get('/api/auth/me')).status).toBe(401);
    expect((await session.get('/api/admin/users')).status).toBe(401);
  });

  it('refuses a forged session cookie', async () => {
    const forged = new ApiClient(t.app, { cookie: 'aw.sid=not-a-real-session-token' });
    expect((await forged.get('/api/auth/me')).status).toBe(401);
  });

  it('throttles failed sign-ins per address: 429 too_many_requests, even with the right password', async () => {
    const from = (password: string) =>
      t.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '203.0.113.9', payload: { usernameOrEmail: 'admin', password } });
    for (let i = 0; i < 10; i++) expect((await from('wrong-password')).statusCode).toBe(401);
    const blocked = await from(ADMIN_PASSWORD);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ key: 'too_many_requests' });
    expect(blocked.json().message).toContain('203.0.113.9');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not affected.
    const other = await t.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '203.0.113.10', payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
    expect(other.statusCode).toBe(200);
  });

  it('validates the sign-in body, naming the field', async () => {
    const response = await t.anonymous.post('/api/auth/login', { password: 'x' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key: 'invalid_parameter', message: 'field usernameOrEmail is required' });
  });
});

describe('bootstrap admin', () => {
  it('creates admin with a generated password on an empty database, printed once', async () => {
    const printed: string[] = [];
    // With ADMIN_PASSWORD unset, the test service signs in with the password it finds in what was printed.
    const t = await startTestService({ env: { ADMIN_PASSWORD: '' }, announce: (line) => printed.push(line) });
    try {
      expect(printed).toHaveLength(1);
      expect(printed[0]).toContain('username "admin", email admin@localhost');
      const password = /password (\S+)/.exec(printed[0]!)![1]!;
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect((await t.admin.get('/api/auth/me')).body.groups).toEqual([{ id: 1, name: 'Admin', builtin: true }]);
      // A restart on the same database prints nothing more.
      await t.service.close();
      const again = await startTestService({ testDb: t.testDb, env: { ADMIN_PASSWORD: password }, announce: (line) => printed.push(line) });
      expect(printed).toHaveLength(1);
      await again.service.close();
    } finally {
      await t.testDb.dispose();
    }
  });

  it('uses ADMIN_PASSWORD and ADMIN_EMAIL when set, prints nothing, and does not create a second admin on restart', async () => {
    const printed: string[] = [];
    const t = await startTestService({ env: { ADMIN_PASSWORD: 'chosen-password', ADMIN_EMAIL: 'root@example.com' }, announce: (l) => printed.push(l) });
    try {
      expect(printed).toEqual([]);
      const me = await t.admin.get('/api/auth/me');
      expect(me.body).toMatchObject({ username: 'admin', email: 'root@example.com' });
      await t.service.close();
      const again = await startTestService({ testDb: t.testDb, env: { ADMIN_PASSWORD: 'chosen-password' }, announce: (l) => printed.push(l) });
      expect(printed).toEqual([]);
      const users = await again.admin.get('/api/admin/users');
      expect(users.body.items).toHaveLength(1);
      await again.close();
    } finally {
      await t.testDb.dispose();
    }
  });
});
