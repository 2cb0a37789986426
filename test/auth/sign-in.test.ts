import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LOGIN_THROTTLE_POLICY } from '../../src/auth/login-throttle.js';
import { ADMIN_PASSWORD, ApiClient, startTestService, useTestService } from '../support/test-service.js';

describe('sign-in', () => {
  const t = useTestService();

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
    // PUBLIC_BASE_URL is https in the tests, but this request came over plain http: the cookie is not Secure
    // (test/auth/trust-proxy.test.ts has the https cases).
    expect(cookie.secure).toBeFalsy();
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
    // A GET from another origin's page (a link, an image) cannot end the session, by Sec-Fetch-Site, Origin or Referer.
    for (const headers of <Record<string, string>[]>[{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'http://127.0.0.1:1' }, { referer: 'http://127.0.0.1:1/page' }]) {
      expect(await session.request('GET', '/api/auth/logout', undefined, headers)).toMatchObject({ status: 403, body: { key: 'forbidden' } });
    }
    expect(await session.request('HEAD', '/api/auth/logout')).toMatchObject({ status: 404 });
    expect((await session.get('/api/auth/me')).status).toBe(200);
    const logout = await session.request('POST', '/api/auth/logout');
    expect(logout.status).toBe(204);
    expect((await session.get('/api/auth/me')).status).toBe(401);
    expect((await session.get('/api/admin/users')).status).toBe(401);
  });

  it('logs out with a GET, as LKE\'s client does, from its own origin or outside a browser', async () => {
    for (const headers of <Record<string, string>[]>[{}, { 'sec-fetch-site': 'same-origin' }, { referer: 'https://lke.example.com/console' }]) {
      const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { usernameOrEmail: 'admin', password: ADMIN_PASSWORD } });
      const session = new ApiClient(t.app, { cookie: `aw.sid=${response.cookies.find((c) => c.name === 'aw.sid')!.value}` });
      expect((await session.request('GET', '/api/auth/logout', undefined, headers)).status).toBe(204);
      expect((await session.get('/api/auth/me')).status).toBe(401);
    }
  });

  it('refuses a forged session cookie', async () => {
    const forged = new ApiClient(t.app, { cookie: 'aw.sid=not-a-real-session-token' });
    expect((await forged.get('/api/auth/me')).status).toBe(401);
  });

  it('validates the sign-in body, naming the field', async () => {
    const response = await t.anonymous.post('/api/auth/login', { password: 'x' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key: 'invalid_parameter', message: 'field usernameOrEmail is required', field: 'usernameOrEmail' });
  });
});

describe('sign-in throttling (login-throttle.ts has the policy)', () => {
  // Per address: 5 failures per 15 min here (LOGIN_FAILURES_PER_ADDRESS), so each test makes few scrypt checks.
  const LIMIT = 5;
  const FREE = DEFAULT_LOGIN_THROTTLE_POLICY.accountFreeFailures;
  const t = useTestService({ env: { LOGIN_FAILURES_PER_ADDRESS: String(LIMIT) } });
  beforeAll(async () => {
    await t.userClient('mallory');
    await t.userClient('victim');
    await t.userClient('target');
  });

  const login = (remoteAddress: string, usernameOrEmail: string, password: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, headers, payload: { usernameOrEmail, password } });

  it('counts before the password check: 200 concurrent wrong passwords from one address give LIMIT × 401, the rest 429', async () => {
    // Distinct unknown logins, so only the address's count is at work.
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => login('203.0.113.20', `nobody-${i}`, 'wrong-password')));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - LIMIT);
    const refused = answers.find((a) => a.statusCode === 429)!;
    expect(refused.json()).toMatchObject({ key: 'too_many_requests' });
    expect(refused.json().message).toContain('203.0.113.20');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Over its limit, the address is refused even the right password; another address is not affected.
    expect((await login('203.0.113.20', 'admin', ADMIN_PASSWORD)).statusCode).toBe(429);
    expect((await login('203.0.113.21', 'admin', ADMIN_PASSWORD)).statusCode).toBe(200);
  });

  it('counts concurrent guesses on one account before checking them: at most the free failures are tried', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => login(`198.51.100.${i + 1}`, 'target', 'wrong-password')));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(FREE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - FREE);
    expect(answers.find((a) => a.statusCode === 429)!.json().message).toContain('this account');
  });

  it("does not reset the address's count on the attacker's own successful sign-in", async () => {
    const from = '203.0.113.30';
    for (let i = 0; i < LIMIT - 1; i++) expect((await login(from, `guess-${i}`, 'wrong-password')).statusCode).toBe(401);
    // Their own account, in between guesses: before, this wiped the address's failures.
    expect((await login(from, 'mallory', 'mallory-password')).statusCode).toBe(200);
    expect((await login(from, 'guess-last', 'wrong-password')).statusCode).toBe(401);
    expect((await login(from, 'guess-more', 'wrong-password')).statusCode).toBe(429);
    expect((await login(from, 'mallory', 'mallory-password')).statusCode).toBe(429);
  });

  it('counts the socket address, not a rotating X-Forwarded-For, when no proxy is trusted (TRUST_PROXY unset)', async () => {
    const answers = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      answers.push(await login('203.0.113.40', `rotating-${i}`, 'wrong-password', { 'x-forwarded-for': `192.0.2.${i + 1}` }));
    }
    expect(answers.map((a) => a.statusCode)).toEqual([...Array(LIMIT).fill(401), 429, 429]);
    expect(answers[LIMIT]!.json().message).toContain('203.0.113.40');
  });

  it('counts IPv6 clients per /64, so rotating through one subscriber block does not help', async () => {
    const statuses = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await login(`2001:db8:7:9::${(i + 1).toString(16)}`, `v6-${i}`, 'wrong-password')).statusCode);
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
    // Another /64 is another client.
    expect((await login('2001:db8:7:a::1', 'v6-other', 'wrong-password')).statusCode).toBe(401);
  });

  it("lets a correct password in after others' failures on the account, once a short delay has passed", async () => {
    // Guesses on victim's account from many addresses, at once: the free ones are tried, the rest refused uncounted.
    const guesses = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`198.51.100.${100 + i}`, 'victim', 'wrong-password')));
    expect(guesses.filter((g) => g.statusCode === 401)).toHaveLength(FREE);
    // The owner, from an address of their own: slowed down (1 s after the last failure), not locked out for 15 minutes.
    let answer = await login('203.0.113.50', 'victim', 'victim-password');
    if (answer.statusCode === 429) {
      const wait = Number(answer.headers['retry-after']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(DEFAULT_LOGIN_THROTTLE_POLICY.accountBaseDelayMs / 1000);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      answer = await login('203.0.113.50', 'victim', 'victim-password');
    }
    expect(answer.statusCode).toBe(200);
    // The success reset the account's count: a typo right after is a plain 401, not a wait.
    expect((await login('203.0.113.50', 'victim', 'typo-password')).statusCode).toBe(401);
  });
});

describe('bootstrap admin', () => {
  it('creates admin with a generated password kept in a 0600 file in DATA_DIR, named in one line, removed at its first change', async () => {
    const printed: string[] = [];
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-initial-password-'));
    const file = path.join(dataDir, 'initial-admin-password');
    // With ADMIN_PASSWORD unset, the test service signs in with the password it finds in the file.
    const t = await startTestService({ env: { ADMIN_PASSWORD: '', DATA_DIR: dataDir }, announce: (line) => printed.push(line) });
    try {
      const password = readFileSync(file, 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // One line, naming the user and the file; never the password itself.
      expect(printed).toHaveLength(1);
      expect(printed[0]).not.toContain('\n');
      expect(printed[0]).toContain('username "admin", email admin@localhost');
      expect(printed[0]).toContain(file);
      expect(printed[0]).not.toContain(password);
      expect((await t.admin.get('/api/auth/me')).body.groups).toEqual([{ id: 1, name: 'Admin', builtin: true }]);

      // Another user's password change leaves the file; the admin's first one removes it.
      const other = await t.admin.post('/api/admin/users', { username: 'other', email: 'other@example.com', password: 'other-password' });
      expect((await t.admin.patch(`/api/admin/users/${other.body.id}`, { password: 'other-password-2' })).status).toBe(200);
      expect(existsSync(file)).toBe(true);
      expect((await t.admin.patch('/api/admin/users/1', { password: 'a-chosen-password' })).status).toBe(200);
      expect(existsSync(file)).toBe(false);

      // A restart on the same database creates no admin and writes no file.
      await t.service.close();
      const again = await startTestService({ testDb: t.testDb, env: { ADMIN_PASSWORD: 'a-chosen-password', DATA_DIR: dataDir }, announce: (line) => printed.push(line) });
      expect(printed).toHaveLength(1);
      expect(existsSync(file)).toBe(false);
      await again.service.close();
    } finally {
      await t.testDb.dispose();
      rmSync(dataDir, { recursive: true, force: true });
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
