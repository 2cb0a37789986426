import { beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { ApiClient, useTestService } from '../support/test-service.js';

describe('case actions (docs/api.md, Data sources, alerts, matches and cases)', () => {
  const t = useTestService();
  let analyst: ApiClient;
  let base: string;
  let caseId: number;
  beforeAll(async () => {
    analyst = await t.userClient('ana');
    await createSource(t.admin, 'src');
    const alert = await createAlert(t.admin, 'src');
    caseId = (await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['1'] }]))[0]!.id;
    base = `/api/src/alerts/${alert.id}/cases/${caseId}`;
  });

  it('sets each status through its action, for any signed-in user', async () => {
    for (const [action, status] of [
      ['confirm', 'confirmed'],
      ['in-progress', 'in-progress'],
      ['dismiss', 'dismissed'],
      ['unconfirm', 'unconfirmed'],
    ]) {
      const response = await analyst.post(`${base}/action`, { action, comment: `to ${status}` });
      expect(response.status, action).toBe(204);
      const kase = (await analyst.get(base)).body;
      expect(kase.status).toBe(status);
      expect(kase.user).toEqual({ id: expect.any(Number), username: 'ana', email: 'ana@example.com' });
      expect(kase.statusUpdateDate).toMatch(/Z$/);
    }
  });

  it('answers 409 redundant_action for the status a case already has, and logs nothing', async () => {
    const before = (await analyst.get(`${base}/actions`)).body.items.length;
    const response = await analyst.post(`${base}/action`, { action: 'unconfirm' });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ key: 'redundant_action', message: `case ${caseId} is already unconfirmed` });
    expect((await analyst.get(`${base}/actions`)).body.items.length).toBe(before);
  });

  it('records a comment without changing the status', async () => {
    expect((await t.admin.post(`${base}/action`, { action: 'comment', comment: 'Looked at it' })).status).toBe(204);
    expect((await analyst.get(base)).body.status).toBe('unconfirmed');
    const empty = await t.admin.post(`${base}/action`, { action: 'comment' });
    expect(empty.body).toEqual({ key: 'invalid_parameter', message: 'comment must not be empty for the action "comment"', field: 'comment' });
  });

  it('keeps the action log, oldest first', async () => {
    const log = (await analyst.get(`${base}/actions`)).body.items;
    expect(log.map((a: { action: string }) => a.action)).toEqual(['confirm', 'in-progress', 'dismiss', 'unconfirm', 'comment']);
    expect(log[0]).toMatchObject({ caseId, user: { username: 'ana' }, comment: 'to confirmed' });
    expect(log[4]).toMatchObject({ user: { username: 'admin' }, comment: 'Looked at it' });
  });

  it('validates the action, and needs a signed-in user', async () => {
    const bad = await analyst.post(`${base}/action`, { action: 'close' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('field action must be one of "confirm", "dismiss", "unconfirm", "in-progress", "comment"');
    expect((await t.anonymous.post(`${base}/action`, { action: 'confirm' })).status).toBe(401);
    const missing = await analyst.post(base.replace(`/cases/${caseId}`, '/cases/99999') + '/action', { action: 'confirm' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ key: 'not_found', message: 'case 99999 was not found' });
  });
});
