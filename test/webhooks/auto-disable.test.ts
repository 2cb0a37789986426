import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutcomeWriter } from '../../src/delivery/outcome-writer.js';
import { createLogger } from '../../src/logger.js';
import { parseReceiverPolicy } from '../../src/network/receiver-policy.js';
import { claimDueDeliveries, type AttemptRecord, type ClaimedDelivery } from '../../src/outbox/claims.js';
import { enqueueEvents, enqueuePing } from '../../src/outbox/enqueue.js';
import { renderPing } from '../../src/outbox/events.js';
import { describeDuration } from '../../src/webhooks/auto-disable.js';
import { createWebhook as createWebhookRow } from '../../src/webhooks/webhooks.js';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { waitUntil } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { openTestDatabase, startTestService, testKeyring, type TestDatabase, type TestService } from '../support/test-service.js';

const receiverPolicy = parseReceiverPolicy();

/** The automatic disabling (issue 10, item 3) where it is decided: the outcome writer, on a real database. */
describe('automatic disabling, as the outcome writer decides it', () => {
  let t: TestDatabase;
  const lines: string[] = [];
  const log = createLogger('warn', { write: (line: string) => void lines.push(line) });
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(async () => t?.dispose());

  const webhook = async (url: string, events: { eventType: 'newCase' | 'webhookDisabled' }[]) =>
    (await createWebhookRow(t.db, { url, secret: 'auto-disable-secret', events, description: `hook at ${url.split('?')[0]}` }, { receiverPolicy, keyring: testKeyring() })).id;
  /** One newCase event recorded for its subscribers, then claimed: answers the claims of `webhookId`. */
  const claimNew = async (webhookId: number): Promise<ClaimedDelivery> => {
    await t.db.transaction((tx) => enqueueEvents(tx, [{ eventType: 'newCase', sourceKey: 'src', payload: '{"eventType":"newCase"}' }]));
    return claimOf(webhookId);
  };
  const claimOf = async (webhookId: number): Promise<ClaimedDelivery> => {
    const claimed = await claimDueDeliveries(t.db, { limit: 100, leaseMs: 60_000 });
    const mine = claimed.find((c) => c.webhookId === webhookId);
    expect(mine).toBeDefined();
    return mine!;
  };
  const outcome = (claim: ClaimedDelivery, status: AttemptRecord['status'], attemptedAt = Date.now()): AttemptRecord => ({
    id: claim.id,
    leaseToken: claim.leaseToken,
    status,
    nextAttemptAt: status === 'pending' ? Date.now() + 3_600_000 : null,
    attemptedAt,
    responseStatus: status === 'sent' ? 204 : 500,
    error: status === 'sent' ? null : 'receiver answered 500',
    logEntry: { attemptedAt: new Date(attemptedAt).toISOString(), durationMs: 1 },
  });
  const state = async (id: number) =>
    (
      await t.db.query<{ enabled: boolean; disabled_reason: string | null; failing_since: Date | null }>(
        'SELECT enabled, disabled_reason, failing_since FROM webhooks WHERE id = $1',
        [id],
      )
    ).rows[0]!;
  const write = async (writer: OutcomeWriter, record: AttemptRecord) => {
    writer.add(record);
    await writer.flush();
  };

  it('disables a webhook whose attempts all failed for autoDisableAfterMs, before any delivery ends failed, tells the subscribers, logs at warn', async () => {
    // Its URL holds a capability in its query: the other receivers get the URL without it.
    const dead = await webhook('http://127.0.0.1:9/dead?token=capability-123', [{ eventType: 'newCase' }, { eventType: 'webhookDisabled' }]);
    const watcher = await webhook('http://127.0.0.1:9/watcher', [{ eventType: 'webhookDisabled' }]);
    let autoDisableAfterMs = 60_000;
    const writer = new OutcomeWriter(t.db, log, () => autoDisableAfterMs);

    // A failed attempt 5 s ago starts the streak: shorter than autoDisableAfterMs, so nothing is decided yet.
    await write(writer, outcome(await claimNew(dead), 'pending', Date.now() - 5000));
    expect(await state(dead)).toMatchObject({ enabled: true, failing_since: expect.any(Date) });
    const streakStart = (await state(dead)).failing_since!.getTime();
    expect(Math.abs(streakStart - (Date.now() - 5000))).toBeLessThan(2000);

    // Another delivery's first attempt fails, failing for longer than autoDisableAfterMs now, nothing sent since. No
    // delivery has ended failed (each is still to be retried, as behind a backlog): the attempts decide.
    autoDisableAfterMs = 1000;
    await write(writer, outcome(await claimNew(dead), 'pending'));
    const after = await state(dead);
    expect(after).toMatchObject({ enabled: false, disabled_reason: 'automatically after 1 second of failed deliveries' });
    expect(after.failing_since!.getTime()).toBe(streakStart);
    const { rows: pending } = await t.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE webhook_id = $1', [dead]);
    expect(pending.map((r) => r.status)).toEqual(['pending', 'pending']);

    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.webhookId === dead);
    expect(warned).toMatchObject({ level: 40, reason: 'automatically after 1 second of failed deliveries', failingSince: new Date(streakStart).toISOString() });
    expect(JSON.stringify(warned)).not.toContain('auto-disable-secret');

    // The watcher gets webhookDisabled, its payload exactly so; the disabled webhook, though subscribed, does not.
    const { rows } = await t.db.query<{ webhook_id: number; payload: string; disabled_at: Date }>(
      `SELECT d.webhook_id, e.payload, w.disabled_at FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       JOIN webhooks w ON w.id = $1 WHERE e.event_type = 'webhookDisabled'`,
      [dead],
    );
    expect(rows.map((r) => r.webhook_id)).toEqual([watcher]);
    expect(rows[0]!.payload).not.toContain('capability-123');
    expect(rows[0]!.payload).toBe(
      `{"eventType":"webhookDisabled","data":{"webhook":{"id":${dead},"url":"http://127.0.0.1:9/dead","description":"hook at http://127.0.0.1:9/dead"},` +
        `"reason":"automatically after 1 second of failed deliveries","disabledAt":"${rows[0]!.disabled_at.toISOString()}"}}`,
    );
  });

  it('a sent delivery ends the streak: a delivery failing later is judged from its own first failure', async () => {
    const flaky = await webhook('http://127.0.0.1:9/flaky', [{ eventType: 'newCase' }]);
    let autoDisableAfterMs = 60_000;
    const writer = new OutcomeWriter(t.db, log, () => autoDisableAfterMs);
    await write(writer, outcome(await claimNew(flaky), 'pending', Date.now() - 5000));
    expect((await state(flaky)).failing_since).not.toBeNull();
    await write(writer, outcome(await claimNew(flaky), 'sent'));
    expect((await state(flaky)).failing_since).toBeNull();
    // Ends failed at its first attempt: a streak of no length, not disabled (from the first failure, 5 s ago, it would be).
    autoDisableAfterMs = 1000;
    await write(writer, outcome(await claimNew(flaky), 'failed'));
    expect(await state(flaky)).toMatchObject({ enabled: true, failing_since: expect.any(Date) });
  });

  it('disables nothing with autoDisableAfterMs 0', async () => {
    const hook = await webhook('http://127.0.0.1:9/never', [{ eventType: 'newCase' }]);
    const off = new OutcomeWriter(t.db, log, () => 0);
    await write(off, outcome(await claimNew(hook), 'pending', Date.now() - 5000));
    await write(off, outcome(await claimNew(hook), 'failed'));
    expect(await state(hook)).toMatchObject({ enabled: true, failing_since: expect.any(Date) });
  });

  it('leaves pings out: an admin probing a receiver neither starts nor ends a streak', async () => {
    const hook = await webhook('http://127.0.0.1:9/pinged', [{ eventType: 'newCase' }]);
    const writer = new OutcomeWriter(t.db, log, () => 1000);
    await write(writer, outcome(await enqueuePing(t.db, hook, renderPing(hook), 60_000), 'failed', Date.now() - 5000));
    expect(await state(hook)).toMatchObject({ enabled: true, failing_since: null });
  });

  it('describes durations for people', () => {
    expect(describeDuration(432_000_000)).toBe('5 days');
    expect(describeDuration(5_400_000)).toBe('1 hour 30 minutes');
    expect(describeDuration(1000)).toBe('1 second');
    expect(describeDuration(1500)).toBe('1.5 seconds');
    expect(describeDuration(86_401_000)).toBe('1 day 1 second');
  });
});

/** The whole path with a real service, its schedule and real loopback receivers. */
describe('automatic disabling, end to end', () => {
  let t: TestService;
  let dead: TestReceiver;
  let watcher: TestReceiver;
  let healthy: TestReceiver;
  beforeAll(async () => {
    t = await startTestService({ env: { ROLE: 'all' } });
    dead = await TestReceiver.start();
    watcher = await TestReceiver.start();
    healthy = await TestReceiver.start();
    await createSource(t.admin, 'src');
  });
  afterAll(async () => {
    await t?.close();
    for (const receiver of [dead, watcher, healthy]) await receiver?.close();
  });

  it('shows autoDisableAfterMs (default 5 days) and refuses a value other than 0 or from 1000 up', async () => {
    expect((await t.admin.get('/api/config')).body.webhooks.autoDisableAfterMs).toBe(432_000_000);
    for (const bad of [999, -1, 1.5, '5000', null]) {
      const response = await t.admin.post('/api/config', { path: 'webhooks.autoDisableAfterMs', configuration: bad });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        key: 'invalid_parameter',
        message: `webhooks.autoDisableAfterMs must be 0 (never disable) or an integer from 1000 to 315360000000, got ${JSON.stringify(bad)}`,
        field: 'webhooks.autoDisableAfterMs',
      });
    }
    expect((await t.admin.get('/api/config')).body.webhooks.autoDisableAfterMs).toBe(432_000_000);
    for (const good of [0, 1000]) expect((await t.admin.post('/api/config', { path: 'webhooks.autoDisableAfterMs', configuration: good })).status).toBe(204);
    expect((await t.admin.get('/api/config')).body.webhooks.autoDisableAfterMs).toBe(1000);
  });

  it('disables a webhook with a dead receiver, tells a subscribed webhook, and loses nothing', async () => {
    dead.behaviour = answer(500);
    const settings = { deliveryFrequency: '* * * * * *', retryScheduleMs: [1000, 1000], autoDisableAfterMs: 1000 };
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: settings })).status).toBe(204);
    const alert = await createAlert(t.admin, 'src');
    // Subscribed to webhookDisabled itself: it must still never hear of its own disabling.
    const deadHook = await createWebhook(t.admin, {
      url: dead.url,
      description: 'the dead one',
      events: [{ eventType: 'newCase' }, { eventType: 'webhookDisabled' }],
    });
    const watcherHook = await createWebhook(t.admin, { url: watcher.url, events: [{ eventType: 'webhookDisabled' }] });
    await createWebhook(t.admin, { url: healthy.url, events: [{ eventType: 'newCase' }] });

    const [firstCase] = await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['a'] }]);
    // Attempts a second or so apart, all answered 500: the first one over a second after the first failure disables
    // it (the second or the third, as the jitter falls), whether or not the delivery has ended failed.
    await waitUntil(async () => (await t.admin.get(`/api/admin/webhooks/${deadHook.id}`)).body.enabled === false, 'the dead webhook is disabled', 30_000);
    const disabled = (await t.admin.get(`/api/admin/webhooks/${deadHook.id}`)).body;
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'automatically after 1 second of failed deliveries', deliveryCounts: { sent: 0 } });
    expect(disabled.deliveryCounts.pending + disabled.deliveryCounts.failed).toBe(1);
    const attemptsBefore = dead.received.length;
    expect([2, 3]).toContain(attemptsBefore);

    await watcher.waitFor(1);
    expect(watcher.received[0]!.body).toBe(
      JSON.stringify({
        eventType: 'webhookDisabled',
        data: {
          webhook: { id: deadHook.id, url: dead.url, description: 'the dead one' },
          reason: 'automatically after 1 second of failed deliveries',
          disabledAt: disabled.disabledAt,
        },
      }),
    );
    expect((await t.admin.get(`/api/admin/webhooks/${watcherHook.id}`)).body.deliveryCounts).toEqual({ pending: 0, sent: 1, failed: 0 });

    // Disabled: a new event is recorded for it but not sent, while the healthy webhook gets it.
    const [secondCase] = await reportMatches(t.admin, 'src', alert.id, [{ nodes: ['b'] }]);
    await healthy.waitFor(2);
    expect(dead.received).toHaveLength(attemptsBefore);
    expect((await t.admin.get(`/api/admin/webhooks/${deadHook.id}`)).body.deliveryCounts).toEqual({ ...disabled.deliveryCounts, pending: disabled.deliveryCounts.pending + 1 });

    // The receiver is back: enabled again, what waited is sent, and one that ended failed can be sent again.
    dead.behaviour = answer(204);
    expect((await t.admin.patch(`/api/admin/webhooks/${deadHook.id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabledReason: null });
    const failed = (await t.admin.get(`/api/admin/webhooks/${deadHook.id}/deliveries?status=failed`)).body.items[0];
    if (failed) expect((await t.admin.post(`/api/admin/webhooks/${deadHook.id}/deliveries/${failed.id}/redeliver`)).status).toBe(200);
    await dead.waitFor(attemptsBefore + 2);
    const sentCases = dead.received.slice(attemptsBefore).map((r) => (JSON.parse(r.body) as { data: { case: { id: number } } }).data.case.id);
    expect(sentCases.sort()).toEqual([firstCase!.id, secondCase!.id].sort());
    expect(dead.received.some((r) => r.body.includes('webhookDisabled'))).toBe(false);
    await waitUntil(
      async () => (await t.admin.get(`/api/admin/webhooks/${deadHook.id}`)).body.deliveryCounts.sent === 2,
      'both deliveries are recorded sent',
      10_000,
    );
  }, 60_000);
});
