import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { insertUser } from '../../src/auth/users.repo.js';
import { startTestService, type TestService } from '../support/test-service.js';

// Usernames that could pass for someone else: another's email, invisible or text-direction characters, look-alike
// (compatibility) forms of a taken name.
describe('usernames that impersonate', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.close());

  const create = (username: string, email: string) => t.admin.post('/api/admin/users', { username, email, password: 'a-good-password' });

  it("refuses a username shaped like an email that is not the user's own, and takes the user's own", async () => {
    expect(await create('boss@example.com', 'mallory@example.com')).toMatchObject({
      status: 400,
      body: { key: 'invalid_parameter', message: "username must not contain @ unless it is the user's own email: a username shaped like another address could be taken for its owner" },
    });
    const own = await create('Carol@Example.com', 'carol@example.com');
    expect(own.status).toBe(201);
    // Changing the email would leave the old address as the name: refused until the name changes too.
    expect((await t.admin.patch(`/api/admin/users/${own.body.id}`, { email: 'carol@elsewhere.example' })).status).toBe(400);
    expect((await t.admin.patch(`/api/admin/users/${own.body.id}`, { username: 'carol', email: 'carol@elsewhere.example' })).status).toBe(200);
    expect((await t.admin.get('/api/admin/users')).body.items.map((u: { username: string }) => u.username)).not.toContain('boss@example.com');
  });

  it('refuses invisible and text-direction characters, and takes a look-alike of a taken name as that name', async () => {
    const invisible = 'username must not contain invisible, control or text-direction characters (such as U+200B or U+202E)';
    for (const username of ['admin\u200b', 'admin\u202e', '\u2066admin', 'ad\u00admin', 'admin\u3164']) {
      expect(await create(username, `x${username.length}@example.com`), JSON.stringify(username)).toMatchObject({ status: 400, body: { message: invisible } });
    }
    // Fullwidth ａdmin is admin (NFKC): taken.
    expect(await create('\uff41dmin', 'fullwidth@example.com')).toMatchObject({ status: 409, body: { key: 'already_exists' } });
    const bob = await create('\uff22\uff2f\uff22', 'bob@example.com');
    expect(bob).toMatchObject({ status: 201, body: { username: 'BOB' } });
    // Sign-in takes either spelling.
    expect((await t.anonymous.post('/api/auth/login', { usernameOrEmail: '\uff22\uff2f\uff22', password: 'a-good-password' })).status).toBe(200);
  });

  it('signs in the owner of an email, not an older user named after it', async () => {
    // Made before the rule, straight in the database.
    const passwordHash = await hashPassword('impostor-password');
    await insertUser(t.db, { username: 'dave@example.com', email: 'impostor@example.com', passwordHash, groupIds: [2] });
    expect((await create('dave', 'dave@example.com')).status).toBe(201);
    const signIn = await t.anonymous.post('/api/auth/login', { usernameOrEmail: 'dave@example.com', password: 'a-good-password' });
    expect(signIn).toMatchObject({ status: 200, body: { username: 'dave', email: 'dave@example.com' } });
  });
});
