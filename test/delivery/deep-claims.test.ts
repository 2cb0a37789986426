import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, createWebhook, reportMatches } from '../support/fixtures.js';
import { waitUntil } from '../support/processes.js';
import { answer, TestReceiver } from '../support/receiver.js';
import { startTestService, useTestService, type TestService } from '../support/test-service.js';

const EVERY_SECOND = '* * * * * *';

async function statusCounts(t: TestService): Promise<Record<string, number>> {
  const { rows } = await t.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** How many times the receiver got each delivery id (`webhook-id`). */
function receivedCounts(receiver: TestReceiver): number[] {
  const counts = new Map<string, number>();
  for (const request of receiver.received) counts.set(String(request.headers['webhook-id']), (counts.get(String(request.headers['webhook-id'])) ?? 0) + 1);
  return [...counts.values()];
}

/** The claims this service made so far (its claim histogram's count). */
async function claimsMade(t: TestService): Promise<number> {
  const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
  const line = metrics.body.split('\n').find((l) => l.startsWith('webhook_claim_duration_seconds_count'));
  return Number(line!.slice(line!.lastIndexOf(' ') + 1));
}

// Claims go deeper while the backlog is deep (DeliveryWorker's depth): fewer, larger claims than the lanes of depth 1
// would make, every delivery still sent once, and the leases of what waits longer than its lease renewed.
describe('deep claims (the real schedule)', () => {
  const t = useTestService({ env: { ROLE: 'all' } });
  let receiver: TestReceiver;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('drains a deep backlog in fewer claims than depth 1 allows, each delivery sent once', async () => {
    await createSource(t.admin, 'deep');
    const alert = await createAlert(t.admin, 'deep');
    for (let i = 0; i < 3; i++) await createWebhook(t.admin, { url: receiver.url, secret: `deep-claims-secret-${i}`, events: [{ eventType: 'newCase', sourceKey: 'deep' }] });
    for (let call = 0; call < 6; call++) await reportMatches(t.admin, 'deep', alert.id, Array.from({ length: 250 }, (_, i) => ({ nodes: [`deep-${call}-${i}`] })));
    const before = await claimsMade(t);
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: EVERY_SECOND } })).status).toBe(204);
    await receiver.waitFor(4500, 60_000);
    const claims = (await claimsMade(t)) - before;
    await waitUntil(async () => (await statusCounts(t)).sent === 4500, 'every delivery is sent', 30_000);
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: 'none' } })).status).toBe(204);
    expect(receivedCounts(receiver).every((n) => n === 1)).toBe(true);
    expect(receiver.received).toHaveLength(4500);
    // On PostgreSQL, at depth 1 a claim takes at most 16 of a webhook (its concurrency), 48 of these three: 94 claims
    // at least; deeper claims take up to 8 times that. PGlite keeps its own depth (CLAIM_DEPTH: its memory).
    if (t.db.kind === 'postgres') expect(claims).toBeLessThan(4500 / 48);
    else expect(claims).toBeGreaterThan(0);
    const { rows } = await t.db.query<{ locked: number }>(`SELECT count(*)::int AS locked FROM webhook_deliveries WHERE locked_until IS NOT NULL`);
    expect(rows[0]!.locked).toBe(0);
  });
});

// Two workers on one database, slow answers, a short lease: what waits in a deep lane longer than the lease is renewed,
// so the other worker never claims (and sends) it a second time.
describe('lease renewal between two workers', () => {
  const env = { ROLE: 'all', DELIVERY_LEASE_MS: '2000', DELIVERY_CONCURRENCY_PER_WEBHOOK: '4' };
  const first = useTestService({ env });
  let second: TestService;
  let receiver: TestReceiver;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    receiver.behaviour = (request, index, response) => void setTimeout(() => answer(204)(request, index, response), 400);
    second = await startTestService({ testDb: first.testDb, env });
  });
  afterAll(async () => {
    await second?.close();
    await receiver?.close();
  });

  it('sends each delivery once though most wait longer than the lease', async () => {
    await createSource(first.admin, 'slow');
    const alert = await createAlert(first.admin, 'slow');
    await createWebhook(first.admin, { url: receiver.url, secret: 'lease-renewal-secret', events: [{ eventType: 'newCase', sourceKey: 'slow' }] });
    await reportMatches(first.admin, 'slow', alert.id, Array.from({ length: 96 }, (_, i) => ({ nodes: [`slow-${i}`] })));
    const set = await first.admin.post('/api/config', { path: 'webhooks', configuration: { deliveryFrequency: EVERY_SECOND, requestTimeoutMs: 1000 } });
    expect(set.status).toBe(204);
    // 4 at a time per worker, 400 ms each: 96 take about 5 s, so most wait past their 2 s lease.
    await waitUntil(async () => (await statusCounts(first)).sent === 96, 'every delivery is sent', 60_000);
    expect(receivedCounts(receiver).every((n) => n === 1)).toBe(true);
    expect(receiver.received).toHaveLength(96);
  });
});
