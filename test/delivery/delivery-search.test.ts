import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { useTestService, type ApiClient } from '../support/test-service.js';

interface Found {
  id: number;
  webhookId: number;
  status: string;
  responseStatus?: number;
  payload: { eventType: string; data: { alert?: { id: number }; case?: { id: number } } };
}

// The search across webhooks (docs/api.md, "Searching deliveries"): every filter, alone and together, and the cursor.
describe('searching the deliveries of every webhook', () => {
  const t = useTestService();
  let ok: TestReceiver;
  let down: TestReceiver;
  let all: number; // every event, answered 204
  let newCases: number; // newCase only, answered 500, never retried
  let firstAlert: number;
  let secondAlert: number;
  let firstCase: number;
  let startedAt: string;

  const search = async (query: string, client: ApiClient = t.admin): Promise<{ items: Found[]; nextCursor: string | null }> => {
    const response = await client.get(`/api/admin/deliveries${query}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  const ids = (found: { items: Found[] }) => found.items.map((d) => d.id);
  /** Every page of a search, `limit` at a time, following nextCursor. */
  const everyPage = async (query: string, limit: number): Promise<Found[]> => {
    const found: Found[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 50; page++) {
      const answer = await search(`?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      found.push(...answer.items);
      cursor = answer.nextCursor;
      if (cursor === null) return found;
    }
    throw new Error('more than 50 pages');
  };

  beforeAll(async () => {
    [ok, down] = await Promise.all([TestReceiver.start(), TestReceiver.start()]);
    down.behaviour = answer(500);
    startedAt = new Date(Date.now() - 1000).toISOString();
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { retryScheduleMs: [] } })).status).toBe(204);
    await createSource(t.admin, 'bank');
    firstAlert = (await createAlert(t.admin, 'bank')).id;
    secondAlert = (await createAlert(t.admin, 'bank', { title: 'Large transfers' })).id;
    all = (await createWebhook(t.admin, { url: ok.url })).id;
    newCases = (await createWebhook(t.admin, { url: down.url, events: [{ eventType: 'newCase' }] })).id;
    // The first alert's case: newCase then newMatch; the second alert's: newCase. Then a status change of the first.
    firstCase = (await reportMatches(t.admin, 'bank', firstAlert, [{ nodes: ['a', 'b'] }, { nodes: ['b', 'a'] }]))[0]!.id;
    await reportMatches(t.admin, 'bank', secondAlert, [{ nodes: ['c'] }]);
    expect((await t.admin.post(`/api/bank/alerts/${firstAlert}/cases/${firstCase}/action`, { action: 'confirm' })).status).toBe(204);
    await t.service.engine.worker.drain();
    expect((await t.admin.post(`/api/admin/webhooks/${all}/ping`)).body.status).toBe('sent');
  });
  afterAll(async () => Promise.all([ok?.close(), down?.close()]));

  it('finds every delivery of every webhook, newest first', async () => {
    const found = await search('');
    // 4 events to the first webhook, its ping, and the 2 newCase to the second.
    expect(found.items).toHaveLength(7);
    expect(found.nextCursor).toBeNull();
    expect(ids(found)).toEqual([...ids(found)].sort((a, b) => b - a));
    expect(found.items[0]!.payload.eventType).toBe('ping');
  });

  it('filters by webhook, event type, status, case, alert, delivery id and answer status', async () => {
    expect((await search(`?webhookId=${newCases}`)).items.map((d) => [d.webhookId, d.status, d.responseStatus])).toEqual([
      [newCases, 'failed', 500],
      [newCases, 'failed', 500],
    ]);
    expect((await search('?eventType=newCase')).items.map((d) => d.webhookId).sort()).toEqual([all, all, newCases, newCases].sort());
    expect((await search('?eventType=ping')).items.map((d) => d.webhookId)).toEqual([all]);
    expect(ids(await search('?status=failed'))).toEqual(ids(await search(`?webhookId=${newCases}`)));
    expect((await search('?status=sent')).items).toHaveLength(5);
    const ofCase = await search(`?caseId=${firstCase}`);
    expect(ofCase.items.map((d) => `${d.webhookId}:${d.payload.eventType}`).sort()).toEqual(
      [`${all}:newCase`, `${all}:newMatch`, `${all}:caseStatusChange`, `${newCases}:newCase`].sort(),
    );
    expect(ofCase.items.every((d) => d.payload.data.case?.id === firstCase)).toBe(true);
    const ofAlert = await search(`?alertId=${secondAlert}`);
    expect(ofAlert.items).toHaveLength(2);
    expect(ofAlert.items.every((d) => d.payload.data.alert?.id === secondAlert && d.payload.eventType === 'newCase')).toBe(true);
    expect((await search('?responseStatus=500')).items).toHaveLength(2);
    expect((await search('?responseStatus=204')).items).toHaveLength(5);
    expect((await search('?responseStatus=404')).items).toEqual([]);
    // The delivery a receiver knows by its webhook-id header.
    const webhookIdHeader = ok.received.find((r) => JSON.parse(r.body).eventType === 'newMatch')!.headers['webhook-id'];
    expect((await search(`?deliveryId=${webhookIdHeader}`)).items.map((d) => [String(d.id), d.payload.eventType])).toEqual([[webhookIdHeader, 'newMatch']]);
    // Together, all must hold.
    expect((await search(`?webhookId=${all}&eventType=newCase&caseId=${firstCase}`)).items).toHaveLength(1);
    expect((await search(`?webhookId=${newCases}&status=sent`)).items).toEqual([]);
  });

  it('filters by the time the event happened, newest first', async () => {
    const found = await search(`?since=${startedAt}`);
    expect(found.items).toHaveLength(7);
    // By the event's time, then id: the ping (the newest event) first.
    expect(found.items[0]!.payload.eventType).toBe('ping');
    expect((await search(`?until=${startedAt}`)).items).toEqual([]);
    expect((await search(`?since=${new Date(Date.now() + 60_000).toISOString()}`)).items).toEqual([]);
    expect((await search(`?since=${startedAt}&until=${new Date(Date.now() + 60_000).toISOString()}&webhookId=${newCases}`)).items).toHaveLength(2);
  });

  it('pages by a cursor that deliveries recorded meanwhile do not move', async () => {
    for (const query of ['', `since=${startedAt}`]) {
      const whole = await search(`?${query}`);
      const paged = await everyPage(query, 2);
      expect(paged.map((d) => d.id)).toEqual(ids(whole));
      // A first page, new deliveries, then the second page: the same as before they came.
      const first = await search(`?${query}&limit=3`);
      const second = await search(`?${query}&limit=3&cursor=${encodeURIComponent(first.nextCursor!)}`);
      await reportMatches(t.admin, 'bank', secondAlert, [{ nodes: [`later-${query.length}`] }]);
      expect(ids(await search(`?${query}&limit=3&cursor=${encodeURIComponent(first.nextCursor!)}`))).toEqual(ids(second));
      expect((await search(`?${query}&limit=3`)).items[0]!.id).toBeGreaterThan(first.items[0]!.id);
    }
  });

  it('lists the webhooks whose URL or description holds a text, a page at a time, with their health', async () => {
    expect((await t.admin.patch(`/api/admin/webhooks/${newCases}`, { description: 'Billing: 100% of new cases' })).status).toBe(200);
    const list = async (query: string) => {
      const response = await t.admin.get(`/api/admin/webhooks?${query}`);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body as { totalCount: number; items: { id: number; health?: { failed: number } }[] };
    };
    // Any case, in the description or the URL (both receivers are on 127.0.0.1: the port tells them apart).
    expect((await list('q=BILLING')).items.map((w) => w.id)).toEqual([newCases]);
    expect((await list(`q=${new URL(ok.url).port}`)).items.map((w) => w.id)).toEqual([all]);
    // LIKE's wildcards are taken as they are: "100%" is in one description, "0_" in none.
    expect((await list('q=100%25')).totalCount).toBe(1);
    expect((await list('q=0_')).totalCount).toBe(0);
    // Paged and counted, and with each one's health in the same request.
    const page = await list('q=127.0.0.1&limit=1&offset=1&health=true');
    expect(page.totalCount).toBe(2);
    expect(page.items.map((w) => [w.id, w.health?.failed])).toEqual([[newCases, 2]]);
    expect((await t.admin.get('/api/admin/webhooks?q=')).status).toBe(400);
  });

  it('refuses bad filters naming them, a cursor of another search, and callers who are not Admins', async () => {
    const refused = async (query: string, field: string, message: string) => {
      const response = await t.admin.get(`/api/admin/deliveries${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body).toMatchObject({ key: 'invalid_parameter', field });
      expect(response.body.message).toContain(message);
    };
    await refused('?since=yesterday', 'since', 'query parameter since must be an ISO 8601 date-time');
    await refused(`?since=${startedAt}&until=${startedAt}`, 'since', 'query parameter since must be before query parameter until');
    await refused('?eventType=newThing', 'eventType', '"newCase"');
    await refused('?status=lost', 'status', '"pending", "sent", "failed"');
    await refused('?responseStatus=99', 'responseStatus', '100');
    await refused('?limit=0', 'limit', '1');
    await refused('?cursor=abc', 'cursor', 'cursor');
    // A cursor is its search's: an id cursor does not page a search by time, nor the reverse.
    await refused(`?since=${startedAt}&cursor=12`, 'cursor', 'not a cursor of this search');
    await refused('?cursor=2026-11-25T10:04:05.123456Z/12', 'cursor', 'not a cursor of this search');
    expect((await t.anonymous.get('/api/admin/deliveries')).status).toBe(401);
    expect((await (await t.userClient('ana')).get('/api/admin/deliveries')).status).toBe(403);
  });
});
