import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACCESS_RIGHTS } from '../../src/access/access-rights.js';
import { createAlert, createSource } from '../support/fixtures.js';
import { ApiClient, useTestService, type ApiAnswer } from '../support/test-service.js';

const basic = (email: string, apiKey: string) => ({ authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}` });

/**
 * The rules of groups and access rights through plain HTTP: bad input refused naming the field (and nothing changed),
 * Admin-only routes, what membership of a custom group lets a user see, what a deletion takes with it, and the audit
 * entries every change writes.
 */
describe('groups and access rights: rules', () => {
  const t = useTestService();
  let alertA: number;
  let alertB: number;

  const expectRefused = (answer: ApiAnswer, status: number, key: string, field?: string) => {
    expect({ status: answer.status, key: answer.body.key }, JSON.stringify(answer.body)).toEqual({ status, key });
    if (field !== undefined) expect(answer.body.field, answer.body.message).toBe(field);
  };
  const createGroup = async (sourceKey: string, name: string): Promise<{ id: number; uuid: string }> => {
    const answer = await t.admin.post(`/api/admin/${sourceKey}/groups`, { name });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body;
  };
  const putRights = (sourceKey: string, id: number, accessRights: unknown) => t.admin.request('PUT', `/api/admin/${sourceKey}/groups/${id}/access_rights`, { accessRights });
  const auditRows = async (where: string, params: unknown[]) =>
    (await t.db.query<{ action: string; target_type: string; target_id: string; source_key: string | null; username: string | null; before: unknown; after: unknown }>(
      `SELECT action, target_type, target_id, source_key, username, before, after FROM audit_log WHERE ${where} ORDER BY id`,
      params,
    )).rows;

  beforeAll(async () => {
    await createSource(t.admin, 'a');
    await createSource(t.admin, 'b');
    alertA = (await createAlert(t.admin, 'a')).id;
    alertB = (await createAlert(t.admin, 'b')).id;
  });

  it('refuses non-Admins on every admin route (403), and callers not signed in (401)', async () => {
    const group = await createGroup('a', 'Guarded');
    const analyst = await t.userClient('rules-analyst');
    const member = await t.userClient('rules-member', [group.id]);
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/admin/a/groups'],
      ['POST', '/api/admin/a/groups', { name: 'X' }],
      ['GET', `/api/admin/a/groups/${group.id}`],
      ['PATCH', `/api/admin/a/groups/${group.id}`, { name: 'X' }],
      ['DELETE', `/api/admin/a/groups/${group.id}`],
      ['PUT', `/api/admin/a/groups/${group.id}/access_rights`, { accessRights: [] }],
      ['PATCH', '/api/admin/a/accessRights/settings', { propertyKeyAccessRights: true }],
    ];
    for (const [method, url, body] of routes) {
      for (const caller of [analyst, member]) expectRefused(await caller.request(method as 'GET', url, body), 403, 'forbidden');
      expectRefused(await t.anonymous.request(method as 'GET', url, body), 401, 'unauthorized');
    }
    // Nothing was changed by any of them.
    expect((await t.admin.get(`/api/admin/a/groups/${group.id}`)).body).toMatchObject({ name: 'Guarded', accessRights: [] });
    expect((await t.admin.get('/api/admin/a/groups')).body.map((g: { name: string }) => g.name)).not.toContain('X');
  });

  it('refuses bad group input, naming the field, and changes nothing', async () => {
    const group = await createGroup('a', 'Named');
    const before = (await t.admin.get('/api/admin/a/groups')).body;
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: '   ' }), 400, 'invalid_parameter', 'name');
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: 'x'.repeat(201) }), 400, 'invalid_parameter', 'name');
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: 'Named\u202e' }), 400, 'invalid_parameter', 'name');
    expectRefused(await t.admin.post('/api/admin/a/groups', {}), 400, 'invalid_parameter', 'name');
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: 'Other', uuid: 'not-a-uuid' }), 400, 'invalid_parameter', 'uuid');
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: ' admin ' }), 409, 'already_exists');
    expectRefused(await t.admin.post('/api/admin/a/groups', { name: 'Other', uuid: group.uuid }), 409, 'already_exists');
    expectRefused(await t.admin.patch(`/api/admin/a/groups/${group.id}`, { name: '' }), 400, 'invalid_parameter', 'name');
    expectRefused(await t.admin.patch('/api/admin/a/groups/0', { name: 'Y' }), 400, 'invalid_parameter', 'id');
    expectRefused(await t.admin.patch(`/api/admin/b/groups/${group.id}`, { name: 'Y' }), 404, 'not_found');
    expectRefused(await t.admin.delete(`/api/admin/b/groups/${group.id}`), 404, 'not_found');
    expectRefused(await t.admin.get('/api/admin/nosuch/groups'), 400, 'dataSource_unavailable');
    expect((await t.admin.get('/api/admin/a/groups')).body).toEqual(before);
  });

  it('refuses bad access rights, naming the right and the rule, and keeps the rights the group had', async () => {
    const group = await createGroup('a', 'Checked');
    const kept = [{ targetType: 'nodeCategory', targetName: 'Account', type: 'read' }];
    expect((await putRights('a', group.id, kept)).status).toBe(204);
    const refusals: [unknown, string, string, RegExp][] = [
      [[...kept, { targetType: 'nodeCategory', targetName: 'Account', type: 'none' }], 'invalid_parameter', 'accessRights[1]', /second right on nodeCategory "Account" \(accessRights\[0\] is the first\)/],
      [[{ targetType: 'action', targetName: 'admin.config', type: 'do' }], 'invalid_parameter', 'accessRights[0].targetName', /action of the built-in Admin group alone/],
      [[{ targetType: 'everything', targetName: 'x', type: 'read' }], 'invalid_parameter', 'accessRights[0].targetType', /must be one of "nodeCategory"/],
      [[kept[0], { targetType: 'edgeType', targetName: 'T', type: 'do' }], 'invalid_parameter', 'accessRights[1].type', /must be one of "none", "read", "edit", "write"/],
      [[{ targetType: 'edgePropertyKey', targetName: 'amount', type: 'read' }], 'invalid_parameter', 'accessRights[0].targetItemType', /is required/],
      [[{ targetType: 'action', targetName: 'fly', type: 'do' }], 'invalid_parameter', 'accessRights[0].targetName', /must be one of/],
      [[{ targetType: 'alert', targetName: String(alertB), type: 'read' }], 'invalid_parameter', 'accessRights[0].targetName', new RegExp(`${alertB} is not an alert of data source "a"`)],
      [[{ targetType: 'alert', targetName: '007', type: 'read' }], 'invalid_parameter', 'accessRights[0].targetName', /must match/],
      [[{ targetType: 'nodePropertyKey', targetItemType: 'Account', targetName: 'iban', type: 'read' }], 'property_key_access_rights_required', 'accessRights[0]', /turn them on first/],
      [Array.from({ length: MAX_ACCESS_RIGHTS + 1 }, (_, i) => ({ targetType: 'nodeCategory', targetName: `C${i}`, type: 'read' })), 'invalid_parameter', 'accessRights', /at most 10000 items/],
      ['all', 'invalid_parameter', 'accessRights', /must be an array/],
    ];
    for (const [accessRights, key, field, message] of refusals) {
      const answer = await putRights('a', group.id, accessRights);
      expectRefused(answer, 400, key, field);
      expect(answer.body.message).toMatch(message);
    }
    expect((await t.admin.get(`/api/admin/a/groups/${group.id}`)).body.accessRights).toEqual(kept);
    expect(await auditRows("target_type = 'accessRights' AND target_id = $1", [String(group.id)])).toHaveLength(1);
  });

  it('stores every kind of right as given, answered in one order: property keys keep their item type (the union is checked shape by shape)', async () => {
    const group = await createGroup('a', 'Every kind');
    expect((await t.admin.patch('/api/admin/a/accessRights/settings', { propertyKeyAccessRights: true })).status).toBe(204);
    const rights = [
      { targetType: 'action', targetName: 'runQuery', type: 'none' },
      { targetType: 'alert', targetName: String(alertA), type: 'read' },
      { targetType: 'edgePropertyKey', targetItemType: 'TRANSFER', targetName: 'amount', type: 'read' },
      { targetType: 'edgeType', targetName: 'TRANSFER', type: 'edit' },
      { targetType: 'nodeCategory', targetName: '*', type: 'read' },
      { targetType: 'nodePropertyKey', targetItemType: '*', targetName: 'iban', type: 'none' },
    ];
    const answer = await putRights('a', group.id, rights);
    expect(answer.status, JSON.stringify(answer.body)).toBe(204);
    expect((await t.admin.get(`/api/admin/a/groups/${group.id}`)).body.accessRights).toEqual(rights);
    expect((await t.admin.patch('/api/admin/a/accessRights/settings', { propertyKeyAccessRights: false })).status).toBe(204);
    expectRefused(await t.admin.patch('/api/admin/a/accessRights/settings', { propertyKeyAccessRights: 'yes' }), 400, 'invalid_parameter', 'propertyKeyAccessRights');
    // Turned off, the stored property-key rights stay (they have no effect until it is on again).
    expect((await t.admin.get(`/api/admin/a/groups/${group.id}`)).body.accessRights).toEqual(rights);
  });

  it('refuses bad membership changes of users and API keys, naming the field, and keeps the last Admin', async () => {
    const group = await createGroup('a', 'Members');
    const user = (await t.admin.post('/api/admin/users', { username: 'member-rules', email: 'member-rules@example.com', password: 'member-password', groups: [group.id] })).body;
    expectRefused(await t.admin.post('/api/admin/users', { username: 'm2', email: 'm2@example.com', password: 'member-password', groups: [group.id, 999_999] }), 400, 'invalid_parameter', 'groups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { addedGroups: [999_999] }), 400, 'invalid_parameter', 'addedGroups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { removedGroups: [999_999] }), 400, 'invalid_parameter', 'removedGroups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { groups: [2], addedGroups: [1] }), 400, 'invalid_parameter', 'groups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { addedGroups: [2], removedGroups: [2] }), 400, 'invalid_parameter', 'addedGroups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { removedGroups: [group.id] }), 400, 'invalid_parameter', 'removedGroups');
    expectRefused(await t.admin.patch(`/api/admin/users/${user.id}`, { addedGroups: Array.from({ length: 11 }, (_, i) => i + 1) }), 400, 'invalid_parameter', 'addedGroups');
    expectRefused(await t.admin.patch('/api/admin/users/1', { removedGroups: [1], addedGroups: [2] }), 400, 'invalid_parameter');
    expectRefused(await t.admin.post('/api/admin/applications', { name: 'k', groups: [999_999] }), 400, 'invalid_parameter', 'groups');
    expect((await t.admin.get('/api/admin/users')).body.items.find((u: { id: number }) => u.id === 1).groups).toEqual([{ id: 1, name: 'Admin', builtin: true }]);
    expect((await t.admin.get('/api/admin/users')).body.items.find((u: { id: number }) => u.id === user.id).groups).toEqual([{ id: group.id, name: 'Members', builtin: false, sourceKey: 'a' }]);
    // Adding a group it is in and removing one it is not change nothing, and are no error.
    const same = await t.admin.patch(`/api/admin/users/${user.id}`, { addedGroups: [group.id], removedGroups: [2] });
    expect(same.body.groups).toEqual([{ id: group.id, name: 'Members', builtin: false, sourceKey: 'a' }]);
  });

  it('a member of a custom group sees its source only: data sources, group names, through a session and an API key', async () => {
    const group = await createGroup('a', 'Team A');
    const member = await t.userClient('team-a', [group.id]);
    expect((await member.get('/api/dataSources')).body.map((s: { key: string }) => s.key)).toEqual(['a']);
    expect((await member.get('/api/a/groups')).status).toBe(200);
    expectRefused(await member.get('/api/b/groups'), 400, 'dataSource_unavailable');
    expectRefused(await member.get(`/api/b/groups/2/users`), 400, 'dataSource_unavailable');
    expectRefused(await member.get('/api/a/groups?action=fly'), 400, 'invalid_parameter', 'action');
    const groupOfB = await createGroup('b', 'Team B');
    expectRefused(await member.get(`/api/a/groups/${groupOfB.id}/users`), 404, 'not_found');
    // An Analyst sees every source, and an unknown one answers as unknown.
    const analyst = await t.userClient('team-analyst');
    expectRefused(await analyst.get('/api/nosuch/groups'), 400, 'dataSource_unavailable');

    const key = (await t.admin.post('/api/admin/applications', { name: 'team-a-key', groups: [group.id] })).body;
    const throughKey = new ApiClient(t.app, basic('team-a@example.com', key.apiKey));
    expect((await throughKey.get('/api/dataSources')).body.map((s: { key: string }) => s.key)).toEqual(['a']);
    expect((await throughKey.get('/api/auth/me')).body.groups).toEqual([{ id: group.id, name: 'Team A', builtin: false, sourceKey: 'a' }]);
    // The key acts within the groups both have: moved to B's group, it sees nothing the user may.
    expect((await t.admin.patch(`/api/admin/applications/${key.id}`, { groups: [groupOfB.id] })).status).toBe(200);
    expect((await throughKey.get('/api/dataSources')).body).toEqual([]);
  });

  it('deleting a group takes its rights and memberships; deleting the source takes its groups', async () => {
    const group = await createGroup('b', 'Doomed');
    expect((await putRights('b', group.id, [{ targetType: 'alert', targetName: '*', type: 'read' }])).status).toBe(204);
    const member = await t.userClient('doomed-member', [group.id, 2]);
    const key = (await t.admin.post('/api/admin/applications', { name: 'doomed-key', groups: [group.id] })).body;
    expect((await t.admin.delete(`/api/admin/b/groups/${group.id}`)).status).toBe(204);
    const left = await t.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM user_groups WHERE group_id = $1) + (SELECT count(*) FROM application_groups WHERE group_id = $1)
            + (SELECT count(*) FROM group_access_rights WHERE group_id = $1) AS n`,
      [group.id],
    );
    expect(left.rows[0]!.n).toBe(0);
    expect((await member.get('/api/auth/me')).body.groups).toEqual([{ id: 2, name: 'Analyst', builtin: true }]);
    expect((await t.admin.get('/api/admin/applications')).body.find((a: { id: number }) => a.id === key.id).groups).toEqual([]);

    await createSource(t.admin, 'c');
    const ofC = await createGroup('c', 'Of C');
    const onlyC = await t.userClient('only-c', [ofC.id]);
    expect((await t.admin.delete('/api/admin/sources/c')).status).toBe(204);
    expect((await t.db.query('SELECT 1 FROM groups WHERE id = $1', [ofC.id])).rowCount).toBe(0);
    // Its member is in no group now: signed in, it sees no source.
    expect((await onlyC.get('/api/auth/me')).body.groups).toEqual([]);
    expect((await onlyC.get('/api/dataSources')).body).toEqual([]);
  });

  it('records every change of a group, its rights, the setting and its members in the audit log, by whom, before and after', async () => {
    const admin = t.admin;
    const created = await admin.post('/api/admin/a/groups', { name: 'Audited' });
    const id: number = created.body.id;
    await admin.patch(`/api/admin/a/groups/${id}`, { name: 'Audited team' });
    await putRights('a', id, [{ targetType: 'alert', targetName: '*', type: 'read' }]);
    await putRights('a', id, [{ targetType: 'alert', targetName: '*', type: 'read' }]);
    await admin.patch('/api/admin/b/accessRights/settings', { propertyKeyAccessRights: true });
    const user = (await admin.post('/api/admin/users', { username: 'audited', email: 'audited@example.com', password: 'audited-password', groups: [id] })).body;
    await admin.patch(`/api/admin/users/${user.id}`, { addedGroups: [2], removedGroups: [id] });
    const key = (await admin.post('/api/admin/applications', { name: 'audited-key', groups: [id] })).body;
    await admin.delete(`/api/admin/a/groups/${id}`);

    const rows = await auditRows("target_type IN ('group', 'accessRights') AND target_id = $1", [String(id)]);
    expect(rows.map((row) => row.action)).toEqual(['group.create', 'group.rename', 'accessRights.set', 'group.addUser', 'group.removeUser', 'group.addApplication', 'group.delete']);
    expect(rows.every((row) => row.username === 'admin' && row.source_key === 'a')).toBe(true);
    expect(rows[0]!.after).toEqual({ id, uuid: created.body.uuid, name: 'Audited', sourceKey: 'a' });
    expect(rows[1]).toMatchObject({ before: { name: 'Audited' }, after: { name: 'Audited team' } });
    expect(rows[2]).toMatchObject({ target_type: 'accessRights', before: [], after: [{ targetType: 'alert', targetName: '*', type: 'read' }] });
    expect(rows[3]!.after).toEqual({ user: { id: user.id, username: 'audited' } });
    expect(rows[4]!.before).toEqual({ user: { id: user.id, username: 'audited' } });
    expect(rows[5]!.after).toEqual({ application: { id: key.id, name: 'audited-key' } });
    expect(rows[6]!.before).toMatchObject({ name: 'Audited team', accessRights: [{ targetType: 'alert', targetName: '*', type: 'read' }], userIds: [], applicationIds: [key.id] });
    // Joining the built-in Analyst is a membership change too.
    expect(await auditRows("action = 'group.addUser' AND target_id = '2' AND after->'user'->>'username' = 'audited'", [])).toHaveLength(1);
    const settings = await auditRows("target_type = 'accessRightsSettings' AND source_key = 'b'", []);
    expect(settings).toEqual([expect.objectContaining({ action: 'accessRightsSettings.set', target_id: 'b', before: { propertyKeyAccessRights: false }, after: { propertyKeyAccessRights: true } })]);
  });
});
