import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';

const SECRET = 'lifecycle-secret-0001';

/**
 * Read one, change one, disable and enable (issue 10, items 1, 2, 5 and 6), through the API of a real service with
 * real loopback receivers; the test drives the worker itself (ROLE=api: no schedule), one attempt at a time per
 * webhook so the order deliveries arrive in is the order they were sent in.
 */
describe('a webhook changed, paused and enabled again, its history kept', () => {
  let t: TestService;
  let first: TestReceiver;
  let second: TestReceiver;
  let alertId: number;
  let node = 0;

  beforeAll(async () => {
    t = await startTestService({ env: { DELIVERY_CONCURRENCY_PER_WEBHOOK: '1' } });
    first = await TestReceiver.start();
    second = await TestReceiver.start();
    await createSource(t.admin, 'src');
    await createSource(t.admin, 'other');
    alertId = (await createAlert(t.admin, 'src')).id;
  });
  afterAll(async () => {
    await t?.close();
    await first?.close();
    await second?.close();
  });

  /** `count` new cases on `src`: one newCase event each. Answers the case ids. */
  const newCases = async (count: number): Promise<number[]> => {
    const cases = await reportMatches(t.admin, 'src', alertId, Array.from({ length: count }, () => ({ nodes: [`n${++node}`] })));
    return cases.map((c) => c.id);
  };
  const drain = () => t.service.engine.worker.drain();
  const read = async (id: number) => {
    const response = await t.admin.get(`/api/admin/webhooks/${id}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  const caseIdsReceived = (receiver: TestReceiver, from = 0) =>
    receiver.received.slice(from).map((r) => (JSON.parse(r.body) as { data: { case: { id: number } } }).data.case.id);

  it('reads one webhook: the list entry plus its delivery counts by status; 404 for an unknown one', async () => {
    const created = await t.admin.post('/api/admin/webhooks', {
      url: first.url,
      secret: SECRET,
      description: 'Fraud team, ticket FR-12',
      events: [{ eventType: 'newCase', sourceKey: 'src' }],
    });
    expect(created.status).toBe(201);
    expect(created.body.description).toBe('Fraud team, ticket FR-12');
    first.behaviour = answer(204);
    await newCases(2);
    await drain();
    await newCases(1);

    const one = await read(created.body.id);
    const listed = (await t.admin.get('/api/admin/webhooks')).body.items.find((w: { id: number }) => w.id === created.body.id);
    const { deliveryCounts: _counts, ...rest } = one;
    expect(rest).toEqual(listed);
    expect(one).toEqual({
      id: created.body.id,
      url: first.url,
      description: 'Fraud team, ticket FR-12',
      events: [{ eventType: 'newCase', sourceKey: 'src' }],
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
      createdAt: created.body.createdAt,
      updatedAt: created.body.updatedAt,
      deliveryCounts: { pending: 1, sent: 2, failed: 0 },
    });
    expect(JSON.stringify(one)).not.toContain(SECRET);

    const missing = await t.admin.get('/api/admin/webhooks/999999');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ key: 'not_found', message: 'webhook 999999 was not found' });
    await t.admin.delete(`/api/admin/webhooks/${created.body.id}`);
  });

  it('changes each field; a new URL and events apply from then on, recorded deliveries keep their payload and go to the new URL', async () => {
    first.behaviour = answer(500); // the first receiver fails: the delivery waits for its retry
    second.behaviour = answer(204);
    const hook = await createWebhook(t.admin, { url: first.url, secret: SECRET, events: [{ eventType: 'newCase', sourceKey: 'src' }] });
    const [waiting] = await newCases(1);
    await drain();
    const failedOnce = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries`)).body.items[0];
    expect(failedOnce).toMatchObject({ status: 'pending', attempts: 1 });
    const before = await read(hook.id);

    const changed = await t.admin.patch(`/api/admin/webhooks/${hook.id}`, { url: second.url, description: 'moved to the second receiver' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ id: hook.id, url: second.url, description: 'moved to the second receiver', events: before.events, enabled: true });
    expect(changed.body.deliveryCounts).toEqual(before.deliveryCounts); // its history stays
    expect(Date.parse(changed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
    expect(changed.body.createdAt).toBe(before.createdAt);
    expect(await read(hook.id)).toEqual(changed.body);

    // The recorded delivery, redelivered now, goes to the new URL with its payload as recorded.
    expect((await t.admin.post(`/api/admin/webhooks/${hook.id}/deliveries/${failedOnce.id}/redeliver`)).status).toBe(200);
    const secondBefore = second.received.length;
    await drain();
    expect(caseIdsReceived(second, secondBefore)).toEqual([waiting]);
    expect(JSON.parse(second.received.at(-1)!.body)).toEqual(failedOnce.payload);
    const delivery = (await t.admin.get(`/api/admin/webhooks/${hook.id}/deliveries/${failedOnce.id}`)).body;
    expect(delivery.status).toBe('sent');
    // Each attempt log entry says where the attempt went.
    expect(delivery.attemptLog.map((a: { url: string }) => a.url)).toEqual([first.url, second.url]);

    // New events: caseStatusChange only (any source), then a source of its own; newCase no longer.
    const events = await t.admin.patch(`/api/admin/webhooks/${hook.id}`, { events: [{ eventType: 'caseStatusChange' }, { eventType: 'newCase', sourceKey: 'other' }] });
    expect(events.status).toBe(200);
    expect(events.body.events).toEqual([{ eventType: 'caseStatusChange' }, { eventType: 'newCase', sourceKey: 'other' }]);
    const countBefore = (await read(hook.id)).deliveryCounts;
    const [caseId] = await newCases(1);
    expect((await read(hook.id)).deliveryCounts).toEqual(countBefore); // a newCase on src: not subscribed any more
    expect((await t.admin.post(`/api/src/alerts/${alertId}/cases/${caseId}/action`, { action: 'confirm' })).status).toBe(204);
    expect((await read(hook.id)).deliveryCounts.pending).toBe(countBefore.pending + 1);

    const emptied = await t.admin.patch(`/api/admin/webhooks/${hook.id}`, { description: '' });
    expect(emptied.body.description).toBe('');
    await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
  });

  it.each([
    [{ url: 'ftp://example.com/x' }, 'invalid_parameter', 'url must be http or https, got ftp'],
    [{ url: '/relative' }, 'invalid_parameter', 'url "/relative" is not an absolute URL'],
    [{ url: 'https://user:pw@example.com/x' }, 'invalid_parameter', 'url must not contain a user:password part; authenticate receivers with the secret'],
    [{ url: `https://example.com/${'x'.repeat(2048)}` }, 'invalid_parameter', 'field url must be at most 2048 characters long'],
    [{ url: 'http://169.254.169.254/latest' }, 'invalid_parameter', 'url points to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)'],
    [{ url: '' }, 'invalid_parameter', 'field url must not be empty'],
    [{ events: [] }, 'invalid_parameter', 'events must have at least 1 item (leave it out to subscribe to every event)'],
    [{ events: [{ eventType: 'caseDeleted' }] }, 'invalid_parameter', 'field events[0].eventType must be one of "newCase", "newMatch", "caseStatusChange", "webhookDisabled"'],
    [{ events: [{ eventType: 'newCase', sourceKey: 'nosuch' }] }, 'dataSource_unavailable', 'no data source has the key "nosuch"'],
    [
      { events: [{ eventType: 'newCase' }, { eventType: 'webhookDisabled', sourceKey: 'src' }] },
      'invalid_parameter',
      'events[1].sourceKey must be left out for webhookDisabled: that event belongs to no data source',
    ],
    [{ enabled: 'no' }, 'invalid_parameter', 'field enabled must be a boolean'],
    [{ description: 'd'.repeat(501) }, 'invalid_parameter', 'field description must be at most 500 characters long'],
    [
      { secret: 'a-new-secret-of-enough-length' },
      'invalid_parameter',
      'secret cannot be changed by PATCH: rotate it with POST /api/admin/webhooks/:webhookId/secret',
    ],
    // One bad field among good ones: the good ones are not applied either.
    [{ description: 'ok', url: 'ftp://example.com/x' }, 'invalid_parameter', 'url must be http or https, got ftp'],
    [{ enabled: false, events: [{ eventType: 'newCase', sourceKey: 'nosuch' }] }, 'dataSource_unavailable', 'no data source has the key "nosuch"'],
  ])('refuses the change %j, naming the field, and changes nothing', async (body, key, message) => {
    const hook = await createWebhook(t.admin, { url: first.url, secret: SECRET, description: 'unchanged' });
    try {
      const before = await read(hook.id);
      const response = await t.admin.patch(`/api/admin/webhooks/${hook.id}`, body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ key, message, ...(key === 'invalid_parameter' ? { field: expect.any(String) } : {}) });
      expect(await read(hook.id)).toEqual(before);
    } finally {
      await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    }
  });

  it('checks the receiver policy and the description at creation too, and refuses a sourceKey on webhookDisabled', async () => {
    const count = async () => (await t.admin.get('/api/admin/webhooks')).body.items.length;
    const before = await count();
    for (const [body, message] of [
      [{ url: 'http://169.254.169.254/' }, 'url points to 169.254.169.254, which the receiver policy denies (169.254.0.0/16 link-local)'],
      [{ url: first.url, description: 'd'.repeat(501) }, 'field description must be at most 500 characters long'],
      [{ url: first.url, events: [{ eventType: 'webhookDisabled', sourceKey: 'src' }] }, 'events[0].sourceKey must be left out for webhookDisabled: that event belongs to no data source'],
    ] as const) {
      const response = await t.admin.post('/api/admin/webhooks', { secret: SECRET, ...body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ key: 'invalid_parameter', message, field: expect.any(String) });
    }
    expect(await count()).toBe(before);
  });

  it('a PATCH of an unknown webhook is 404 and creates nothing', async () => {
    const response = await t.admin.patch('/api/admin/webhooks/999999', { description: 'x' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ key: 'not_found', message: 'webhook 999999 was not found' });
  });

  it('a disabled webhook gets nothing while the others keep receiving; ping works; enabling sends what waited, oldest first', async () => {
    first.behaviour = answer(204);
    second.behaviour = answer(204);
    const paused = await createWebhook(t.admin, { url: first.url, secret: SECRET, events: [{ eventType: 'newCase' }] });
    const other = await createWebhook(t.admin, { url: second.url, secret: SECRET, events: [{ eventType: 'newCase' }] });

    const disabled = await t.admin.patch(`/api/admin/webhooks/${paused.id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: 'by admin', disabledAt: expect.stringMatching(/Z$/) });
    // Disabling again changes neither when nor who.
    const again = await t.admin.patch(`/api/admin/webhooks/${paused.id}`, { enabled: false });
    expect(again.body).toMatchObject({ disabledAt: disabled.body.disabledAt, disabledReason: 'by admin' });
    expect((await t.admin.get('/api/admin/webhooks')).body.items.find((w: { id: number }) => w.id === paused.id)).toMatchObject({
      enabled: false,
      disabledReason: 'by admin',
    });

    const firstBefore = first.received.length;
    const secondBefore = second.received.length;
    const waited = await newCases(3);
    await drain();
    expect(first.received.length).toBe(firstBefore); // nothing for the disabled webhook...
    expect(caseIdsReceived(second, secondBefore)).toEqual(waited); // ...while the other gets everything
    // Recorded all the same, nothing lost.
    expect((await read(paused.id)).deliveryCounts).toEqual({ pending: 3, sent: 0, failed: 0 });

    // A ping goes out although the webhook is disabled: it is how its receiver is checked before enabling it.
    const ping = await t.admin.post(`/api/admin/webhooks/${paused.id}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ status: 'sent', payload: { eventType: 'ping', data: { webhookId: paused.id } } });
    expect(first.received.length).toBe(firstBefore + 1);

    const more = await newCases(2);
    const enabled = await t.admin.patch(`/api/admin/webhooks/${paused.id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null });
    await drain();
    // What waited, oldest first (one attempt at a time for this webhook: arrival order is sending order).
    expect(caseIdsReceived(first, firstBefore + 1)).toEqual([...waited, ...more]);
    expect((await read(paused.id)).deliveryCounts).toEqual({ pending: 0, sent: 6, failed: 0 });
    await t.admin.delete(`/api/admin/webhooks/${paused.id}`);
    await t.admin.delete(`/api/admin/webhooks/${other.id}`);
  });

  it('deleting a webhook still answers 204 and takes its deliveries with it', async () => {
    const hook = await createWebhook(t.admin, { url: first.url, secret: SECRET, events: [{ eventType: 'newCase' }] });
    await newCases(2);
    expect((await read(hook.id)).deliveryCounts.pending).toBe(2);
    const deleted = await t.admin.delete(`/api/admin/webhooks/${hook.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1', [hook.id]);
    expect(rows[0]!.n).toBe(0);
  });
});
