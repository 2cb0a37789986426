import { describe, expect, it } from 'vitest';
import { signIn, useTestService } from '../support/test-service.js';

describe('users administration', () => {
  const t = useTestService();

  it('creates a user in Analyst by default, who can then sign in', async () => {
    const created = await t.admin.post('/api/admin/users', { username: 'bob', email: 'bob@example.com', password: 'bob-password' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: 'bob', email: 'bob@example.com', groups: [{ id: 2, name: 'Analyst', builtin: true }] });
    expect(created.body.password).toBeUndefined();
    const bob = await signIn(t.app, 'bob@example.com', 'bob-password');
    expect((await bob.get('/api/auth/me')).body.id).toBe(created.body.id);
    const { rows } = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [created.body.id]);
    expect(rows[0]!.password_hash).toMatch(/^scrypt\$/);
  });

  it.each([
    [{ username: 'c', email: 'c@example.com', password: 'short' }, 'password must be at least 8 characters long'],
    [{ username: 'c', email: 'not-an-email', password: 'long-enough' }, 'email "not-an-email" is not an email address (name@domain)'],
    [{ username: 'has space', email: 'c@example.com', password: 'long-enough' }, 'username must be 1 to 100 characters, without spaces, and must not start with @'],
    [{ username: 'c', email: 'c@example.com', password: 'long-enough', groups: [3] }, 'groups contains 3, which is not a group (1 = Admin, 2 = Analyst)'],
    [{ username: 'c', password: 'long-enough' }, 'field email is required'],
    [{ username: 'c', email: 'c@example.com', password: 12345678 }, 'field password must be a string'],
  ])('refuses %j: %s', async (body, message) => {
    const before = (await t.admin.get('/api/admin/users')).body.items.length;
    const response = await t.admin.post('/api/admin/users', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ key: 'invalid_parameter', message, field: expect.any(String) });
    expect((await t.admin.get('/api/admin/users')).body.items.length).toBe(before);
  });

  it('refuses a taken username or email with 409 already_exists', async () => {
    await t.admin.post('/api/admin/users', { username: 'dup', email: 'dup@example.com', password: 'dup-password' });
    const sameName = await t.admin.post('/api/admin/users', { username: 'DUP', email: 'other@example.com', password: 'dup-password' });
    expect(sameName.status).toBe(409);
    expect(sameName.body).toEqual({ key: 'already_exists', message: 'username is already taken by another user' });
    const sameEmail = await t.admin.post('/api/admin/users', { username: 'dup2', email: 'DUP@example.com', password: 'dup-password' });
    expect(sameEmail.body).toEqual({ key: 'already_exists', message: 'email is already used by another user' });
  });

  it('changes a user (groups, password) and ends their sessions on a new password', async () => {
    const created = (await t.admin.post('/api/admin/users', { username: 'eve', email: 'eve@example.com', password: 'eve-password' })).body;
    const eve = await signIn(t.app, 'eve', 'eve-password');
    const changed = await t.admin.patch(`/api/admin/users/${created.id}`, { groups: [1, 2], password: 'eve-password-2' });
    expect(changed.status).toBe(200);
    expect(changed.body.groups.map((g: { id: number }) => g.id)).toEqual([1, 2]);
    expect((await eve.get('/api/auth/me')).status).toBe(401);
    const again = await signIn(t.app, 'eve', 'eve-password-2');
    expect((await again.get('/api/admin/users')).status).toBe(200);
  });

  it('deletes a user (204), then 404 not_found', async () => {
    const created = (await t.admin.post('/api/admin/users', { username: 'gone', email: 'gone@example.com', password: 'gone-password' })).body;
    expect((await t.admin.delete(`/api/admin/users/${created.id}`)).status).toBe(204);
    const again = await t.admin.delete(`/api/admin/users/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ key: 'not_found', message: `user ${created.id} was not found` });
    expect((await t.admin.patch('/api/admin/users/99999', { username: 'x' })).status).toBe(404);
  });

  it('keeps at least one Admin', async () => {
    // eve (made Admin above) and admin are the admins; demote eve, then admin is the last one.
    const users = (await t.admin.get('/api/admin/users')).body.items as { id: number; username: string }[];
    const eve = users.find((u) => u.username === 'eve')!;
    expect((await t.admin.patch(`/api/admin/users/${eve.id}`, { groups: [2] })).status).toBe(200);
    const demoteLast = await t.admin.patch('/api/admin/users/1', { groups: [2] });
    expect(demoteLast.status).toBe(400);
    expect(demoteLast.body.message).toBe('user 1 is the last member of the Admin group: make another user Admin first');
    expect((await t.admin.delete('/api/admin/users/1')).status).toBe(400);
  });

  it('validates path ids, naming the parameter', async () => {
    const response = await t.admin.delete('/api/admin/users/abc');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      key: 'invalid_parameter',
      message: 'path parameter id must be a whole number in plain decimal digits (no sign, leading zero, space, exponent or hex), got "abc"',
      field: 'id',
    });
  });
});
