import { beforeAll, describe, expect, it } from 'vitest';
import { useTestService, type ApiClient } from '../support/test-service.js';

describe('the alert list, a page at a time', () => {
  const t = useTestService();
  let analyst: ApiClient;
  const ids: number[] = [];

  beforeAll(async () => {
    analyst = await t.userClient('paging-analyst');
    expect((await t.admin.post('/api/admin/sources', { key: 'paged', name: 'Paged' })).status).toBe(201);
    for (let i = 1; i <= 25; i++) {
      const created = await t.admin.post('/api/admin/paged/alerts', { title: `Alert ${i}` });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
  });

  const idsOf = (answer: { body: { items: { id: number }[] } }) => answer.body.items.map((alert) => alert.id);

  it('answers the first 20, oldest first, and how many there are, for any signed-in user', async () => {
    const first = await analyst.get('/api/paged/alerts');
    expect(first.status).toBe(200);
    expect(first.body.totalCount).toBe(25);
    expect(idsOf(first)).toEqual(ids.slice(0, 20));
  });

  it('takes offset and limit as LKE\'s client sends them (query parameters), at both paths', async () => {
    expect(idsOf(await analyst.get('/api/paged/alerts?offset=20&limit=10'))).toEqual(ids.slice(20));
    expect(idsOf(await analyst.get('/api/paged/alerts?offset=3&limit=2'))).toEqual(ids.slice(3, 5));
    expect(idsOf(await analyst.get('/api/paged/alerts?offset=25'))).toEqual([]);
    const admin = await t.admin.get('/api/admin/paged/alerts?offset=5&limit=3&_=1732780800000');
    expect(admin.body).toMatchObject({ totalCount: 25, items: [{ title: 'Alert 6' }, { title: 'Alert 7' }, { title: 'Alert 8' }] });
    expect((await t.admin.get('/api/admin/paged/alerts?limit=1000')).body.items).toHaveLength(25);
    expect((await analyst.get('/api/admin/paged/alerts')).status).toBe(403);
  });

  it('bounds the page: a limit from 1 to 1000, an offset from 0', async () => {
    for (const [query, field] of [
      ['limit=1001', 'limit'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['limit=ten', 'limit'],
    ]) {
      const answer = await t.admin.get(`/api/paged/alerts?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body).toMatchObject({ key: 'invalid_parameter', field });
    }
    expect((await t.admin.get('/api/nosuch/alerts')).body.key).toBe('dataSource_unavailable');
  });
});
