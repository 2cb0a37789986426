import type { AddressInfo } from 'node:net';
import { Action, RestClient, SearchUsersSortBy, SearchUsersSortDirection, TargetType } from '@linkurious/rest-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource } from '../support/fixtures.js';
import { ADMIN_PASSWORD, startTestService, type TestService } from '../support/test-service.js';

/**
 * Linkurious Enterprise's own client, unchanged, on the group and access-right routes (its `user`, `accessRight` and
 * `application` APIs): what it sends is served, and every refusal it can meet is one it answers as an error
 * (`isSuccess() === false` with a key its method lists), never one it throws on.
 */
describe('@linkurious/rest-client on groups and access rights', () => {
  let t: TestService;
  let baseUrl: string;
  let admin: RestClient;
  let analyst: RestClient;
  let alertId: number;

  // The client's types are LKE's (ids as numbers, its enums); tests read what the API answered.
  type Answer = { isSuccess(): boolean; status: number; body: unknown };
  async function ok<T>(what: string, call: () => Promise<Answer>): Promise<{ status: number; body: T }> {
    const answer = await call();
    expect(answer.isSuccess(), `${what}: ${JSON.stringify(answer.body)}`).toBe(true);
    return { status: answer.status, body: answer.body as T };
  }
  async function refused(what: string, call: () => Promise<Answer>) {
    const answer = await call().catch((err: unknown) => {
      throw new Error(`${what}: the client threw: ${String(err)}`);
    });
    expect(answer.isSuccess(), `${what}: ${JSON.stringify(answer.body)}`).toBe(false);
    const body = answer.body as { key: string; message: string };
    expect(body.message.length, what).toBeGreaterThan(0);
    return { status: answer.status, ...body };
  }
  const signedIn = async (usernameOrEmail: string, password: string) => {
    const client = new RestClient({ baseUrl });
    expect((await client.auth.login({ usernameOrEmail, password })).isSuccess()).toBe(true);
    return client;
  };

  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await createSource(t.admin, 'fraud');
    await createSource(t.admin, 'sanctions');
    alertId = (await createAlert(t.admin, 'fraud')).id;
    await t.userClient('client-analyst');
    admin = await signedIn('admin', ADMIN_PASSWORD);
    analyst = await signedIn('client-analyst', 'client-analyst-password');
  });
  afterAll(async () => t?.close());

  interface Group {
    id: number;
    uuid: string;
    name: string;
    sourceKey: string;
    builtin: boolean;
    userCount: number;
    accessRights: { targetType: string; targetName: string; type: string; targetItemType?: string }[];
  }

  it('getGroups: the built-in groups (sourceKey "*", their rights as LKE writes them) and the source\'s own', async () => {
    const created = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Listed' }));
    const { body: groups } = await ok<Group[]>('getGroups', () => admin.user.getGroups({ sourceKey: 'fraud' }));
    expect(groups.map((g) => [g.id, g.name, g.sourceKey, g.builtin])).toEqual([
      [1, 'Admin', '*', true],
      [2, 'Analyst', '*', true],
      [created.body.id, 'Listed', 'fraud', false],
    ]);
    const [adminGroup, analystGroup] = groups;
    expect(adminGroup!.userCount).toBe(1);
    expect(adminGroup!.accessRights).toEqual(
      expect.arrayContaining([
        { targetType: 'nodeCategory', targetName: '*', type: 'write' },
        { targetType: 'action', targetName: 'admin.config', type: 'do' },
        { targetType: 'alert', targetName: '*', type: 'read' },
      ]),
    );
    expect(analystGroup!.accessRights).toEqual([
      { targetType: 'nodeCategory', targetName: '*', type: 'read' },
      { targetType: 'edgeType', targetName: '*', type: 'read' },
      { targetType: 'nodePropertyKey', targetItemType: '*', targetName: '*', type: 'read' },
      { targetType: 'edgePropertyKey', targetItemType: '*', targetName: '*', type: 'read' },
      { targetType: 'alert', targetName: '*', type: 'read' },
      { targetType: 'action', targetName: 'rawReadQuery', type: 'do' },
      { targetType: 'action', targetName: 'runQuery', type: 'do' },
    ]);
    // Another source lists the built-in groups and none of fraud's.
    const { body: other } = await ok<Group[]>('getGroups of another source', () => admin.user.getGroups({ sourceKey: 'sanctions' }));
    expect(other.map((g) => g.name)).toEqual(['Admin', 'Analyst']);
    expect(await refused('unknown source', () => admin.user.getGroups({ sourceKey: 'nosuch' }))).toMatchObject({ status: 400, key: 'dataSource_unavailable' });
    expect(await refused('not Admin', () => analyst.user.getGroups({ sourceKey: 'fraud' }))).toMatchObject({ status: 403, key: 'forbidden' });
  });

  it('createGroup, getGroup, updateGroup: answers, and refusals the client lists', async () => {
    const uuid = '6a1f0b7e-2c3d-4e5f-8a9b-0c1d2e3f4a5b';
    const { status, body: group } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Investigators', uuid }));
    expect(status).toBe(201);
    expect(group).toEqual({
      id: expect.any(Number),
      uuid,
      name: 'Investigators',
      sourceKey: 'fraud',
      builtin: false,
      userCount: 0,
      accessRights: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(group.id).toBeGreaterThanOrEqual(3);
    expect((await ok<Group>('getGroup', () => admin.user.getGroup({ sourceKey: 'fraud', id: group.id }))).body).toEqual(group);

    expect(await refused('a taken name, in other case', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'investigators' }))).toMatchObject({
      status: 409,
      key: 'already_exists',
      message: 'data source "fraud" already has a group named "investigators"',
    });
    expect(await refused('a built-in name', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Analyst' }))).toMatchObject({ status: 409, key: 'already_exists' });
    expect(await refused('unknown source', () => admin.user.createGroup({ sourceKey: 'nosuch', name: 'X' }))).toMatchObject({ key: 'dataSource_unavailable' });
    expect(await refused('not Admin', () => analyst.user.createGroup({ sourceKey: 'fraud', name: 'X' }))).toMatchObject({ status: 403, key: 'forbidden' });
    // The same name on another source is another group.
    await ok('same name elsewhere', () => admin.user.createGroup({ sourceKey: 'sanctions', name: 'Investigators' }));

    const renamed = await ok<Group>('updateGroup', () => admin.user.updateGroup({ sourceKey: 'fraud', id: group.id, name: 'Fraud investigators' }));
    expect(renamed.body).toMatchObject({ id: group.id, uuid, name: 'Fraud investigators' });
    expect(await refused('rename a built-in group', () => admin.user.updateGroup({ sourceKey: 'fraud', id: 2, name: 'Readers' }))).toMatchObject({
      status: 403,
      key: 'forbidden',
      message: expect.stringMatching(/built-in group Analyst cannot be renamed/),
    });
    expect(await refused('a group of another source', () => admin.user.getGroup({ sourceKey: 'sanctions', id: group.id }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('rename one of another source', () => admin.user.updateGroup({ sourceKey: 'sanctions', id: group.id, name: 'Y' }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('unknown group', () => admin.user.getGroup({ sourceKey: 'fraud', id: 999_999 }))).toMatchObject({ status: 404, key: 'not_found' });
  });

  it('setAccessRights and updateAccessRightsSettings: the whole set replaced; property-key rights need the setting', async () => {
    const { body: group } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Rights' }));
    const rights = [
      { targetType: TargetType.NODE_CATEGORY, targetName: 'Account', type: 'read' },
      { targetType: TargetType.EDGE_TYPE, targetName: '*', type: 'write' },
      { targetType: TargetType.ACTION, targetName: Action.RAW_READ_QUERY, type: 'do' },
      { targetType: TargetType.ALERT, targetName: String(alertId), type: 'read' },
    ];
    const set = await ok('setAccessRights', () => admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: group.id, accessRights: rights } as never));
    expect(set.status).toBe(204);
    const stored = (await ok<Group>('getGroup', () => admin.user.getGroup({ sourceKey: 'fraud', id: group.id }))).body.accessRights;
    expect(stored).toHaveLength(4);
    expect(stored).toEqual(expect.arrayContaining(rights));

    const propertyRight = { targetType: TargetType.NODE_PROPERTY_KEY, targetItemType: 'Account', targetName: 'iban', type: 'none' };
    expect(await refused('a property-key right with the setting off', () => admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: group.id, accessRights: [propertyRight] } as never))).toMatchObject({
      status: 400,
      key: 'property_key_access_rights_required',
      message: expect.stringMatching(/^accessRights\[0\] is a property-key right, and data source "fraud" does not use them/),
    });
    expect((await ok<Group>('unchanged', () => admin.user.getGroup({ sourceKey: 'fraud', id: group.id }))).body.accessRights).toEqual(stored);

    expect((await ok('turn them on', () => admin.accessRight.updateAccessRightsSettings({ sourceKey: 'fraud', propertyKeyAccessRights: true }))).status).toBe(204);
    await ok('setAccessRights with a property-key right', () => admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: group.id, accessRights: [propertyRight] } as never));
    expect((await ok<Group>('getGroup', () => admin.user.getGroup({ sourceKey: 'fraud', id: group.id }))).body.accessRights).toEqual([propertyRight]);

    expect(await refused('rights of a built-in group', () => admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: 1, accessRights: [] }))).toMatchObject({ status: 403, key: 'forbidden' });
    expect(await refused('unknown group', () => admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: 999_999, accessRights: [] }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('unknown source', () => admin.accessRight.setAccessRights({ sourceKey: 'nosuch', id: group.id, accessRights: [] }))).toMatchObject({ key: 'dataSource_unavailable' });
    expect(await refused('not Admin', () => analyst.accessRight.setAccessRights({ sourceKey: 'fraud', id: group.id, accessRights: [] }))).toMatchObject({ status: 403, key: 'forbidden' });
    expect(await refused('settings of an unknown source', () => admin.accessRight.updateAccessRightsSettings({ sourceKey: 'nosuch', propertyKeyAccessRights: true }))).toMatchObject({ key: 'dataSource_unavailable' });
    expect(await refused('settings, not Admin', () => analyst.accessRight.updateAccessRightsSettings({ sourceKey: 'fraud', propertyKeyAccessRights: false }))).toMatchObject({ status: 403, key: 'forbidden' });
  });

  it('createUser and updateUser take custom groups, and addedGroups and removedGroups; a member reads its source\'s group names and users', async () => {
    const { body: tellers } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Tellers' }));
    const { body: readers } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Readers' }));
    await ok('rights', () =>
      admin.accessRight.setAccessRights({ sourceKey: 'fraud', id: readers.id, accessRights: [{ targetType: TargetType.ACTION, targetName: Action.RAW_READ_QUERY, type: 'do' }] } as never),
    );
    const created = await ok<{ id: number; groups: unknown[] }>('createUser', () =>
      admin.user.createUser({ username: 'teller', email: 'teller@example.com', password: 'teller-password', groups: [tellers.id] }),
    );
    expect(created.body.groups).toEqual([{ id: tellers.id, name: 'Tellers', builtin: false, sourceKey: 'fraud' }]);
    const updated = await ok<{ groups: unknown[] }>('updateUser', () => admin.user.updateUser({ id: created.body.id, addedGroups: [readers.id], removedGroups: [] }));
    expect(updated.body.groups).toEqual([
      { id: tellers.id, name: 'Tellers', builtin: false, sourceKey: 'fraud' },
      { id: readers.id, name: 'Readers', builtin: false, sourceKey: 'fraud' },
    ]);
    expect(await refused('updateUser, unknown group', () => admin.user.updateUser({ id: created.body.id, addedGroups: [999_999] }))).toMatchObject({ status: 400, key: 'invalid_parameter' });
    await ok('second member', () => admin.user.createUser({ username: 'auditor', email: 'auditor@example.com', password: 'auditor-password', groups: [readers.id] }));

    const teller = await signedIn('teller', 'teller-password');
    // getCurrentUser: LKE's actions and accessRights, by source (`*` for the built-in groups' every source).
    const me = await ok<{ actions: Record<string, string[]>; accessRights: Record<string, unknown> }>('getCurrentUser', () => teller.auth.getCurrentUser());
    expect(me.body.actions).toEqual({ fraud: ['rawReadQuery'] });
    expect(me.body.accessRights).toEqual({ fraud: { alerts: { read: [] }, nodes: { edit: [], write: [] }, edges: { edit: [], write: [] } } });
    const adminMe = await ok<{ actions: Record<string, string[]>; accessRights: Record<string, unknown> }>('getCurrentUser, Admin', () => admin.auth.getCurrentUser());
    expect(adminMe.body.actions['*']).toEqual(expect.arrayContaining(['rawWriteQuery', 'admin.config']));
    expect(adminMe.body.accessRights).toEqual({ '*': { alerts: { read: ['*'] }, nodes: { edit: ['*'], write: ['*'] }, edges: { edit: ['*'], write: ['*'] } } });
    const names = await ok<{ id: number; uuid: string; name: string; sourceKey: string }[]>('getGroupNames', () => teller.user.getGroupNames({ sourceKey: 'fraud' }));
    expect(names.body.map((g) => [g.name, g.sourceKey])).toEqual(expect.arrayContaining([['Admin', '*'], ['Analyst', '*'], ['Tellers', 'fraud'], ['Readers', 'fraud']]));
    expect(names.body.find((g) => g.id === tellers.id)).toEqual({ id: tellers.id, uuid: tellers.uuid, name: 'Tellers', sourceKey: 'fraud' });
    const withAction = await ok<{ name: string }[]>('getGroupNames with action', () => teller.user.getGroupNames({ sourceKey: 'fraud', action: Action.RAW_READ_QUERY }));
    expect(withAction.body.map((g) => g.name)).toEqual(['Admin', 'Analyst', 'Readers']);
    expect(await refused('a source none of its groups is on', () => teller.user.getGroupNames({ sourceKey: 'sanctions' }))).toMatchObject({ status: 400, key: 'dataSource_unavailable' });

    // By username (the client sends sort_by and sort_direction): auditor, created after teller, comes first.
    const byName = (offset: number) => () =>
      teller.user.getGroupUsers({ sourceKey: 'fraud', groupId: readers.id, sortBy: SearchUsersSortBy.USERNAME, sortDirection: SearchUsersSortDirection.ASC, limit: 1, offset });
    const page = await ok<{ found: number; results: unknown[] }>('getGroupUsers', byName(0));
    expect(page.body).toEqual({ found: 2, results: [{ id: expect.any(Number), username: 'auditor', email: 'auditor@example.com' }] });
    const next = await ok<{ found: number; results: unknown[] }>('getGroupUsers, next page', byName(1));
    expect(next.body).toEqual({ found: 2, results: [{ id: created.body.id, username: 'teller', email: 'teller@example.com' }] });
    const descending = await ok<{ results: { username: string }[] }>('getGroupUsers, by id, newest first', () =>
      teller.user.getGroupUsers({ sourceKey: 'fraud', groupId: readers.id, sortDirection: SearchUsersSortDirection.DESC }),
    );
    expect(descending.body.results.map((u) => u.username)).toEqual(['auditor', 'teller']);
    expect(await refused('a group of no source it sees', () => teller.user.getGroupUsers({ sourceKey: 'fraud', groupId: 999_999 }))).toMatchObject({ status: 404, key: 'not_found' });
  });

  it('createApplication and updateApplication take custom groups', async () => {
    const { body: group } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'sanctions', name: 'Screening' }));
    const created = await ok<{ id: number; groups: unknown[] }>('createApplication', () => admin.application.createApplication({ name: 'screening-sync', groups: [2], rights: [] }));
    expect(created.body.groups).toEqual([{ id: 2, name: 'Analyst', builtin: true }]);
    const updated = await ok<{ id: number; groups: unknown[]; enabled: boolean }>('updateApplication', () =>
      admin.application.updateApplication({ id: created.body.id, groups: [group.id], enabled: false }),
    );
    expect(updated.body).toMatchObject({ id: created.body.id, enabled: false, groups: [{ id: group.id, name: 'Screening', builtin: false, sourceKey: 'sanctions' }] });
    expect(await refused('unknown application', () => admin.application.updateApplication({ id: 999_999, enabled: true }))).toMatchObject({ status: 404, key: 'not_found' });
  });

  it('deleteGroup: gone, and refusals the client lists', async () => {
    const { body: group } = await ok<Group>('createGroup', () => admin.user.createGroup({ sourceKey: 'fraud', name: 'Short-lived' }));
    expect((await ok('deleteGroup', () => admin.user.deleteGroup({ sourceKey: 'fraud', id: group.id }))).status).toBe(204);
    expect(await refused('deleted', () => admin.user.getGroup({ sourceKey: 'fraud', id: group.id }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('again', () => admin.user.deleteGroup({ sourceKey: 'fraud', id: group.id }))).toMatchObject({ status: 404, key: 'not_found' });
    expect(await refused('a built-in group', () => admin.user.deleteGroup({ sourceKey: 'fraud', id: 1 }))).toMatchObject({ status: 403, key: 'forbidden', message: expect.stringMatching(/built-in group Admin cannot be deleted/) });
    expect(await refused('unknown source', () => admin.user.deleteGroup({ sourceKey: 'nosuch', id: 1 }))).toMatchObject({ key: 'dataSource_unavailable' });
    expect(await refused('not Admin', () => analyst.user.deleteGroup({ sourceKey: 'fraud', id: 2 }))).toMatchObject({ status: 403, key: 'forbidden' });
  });
});
