import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutcomeWriter } from '../../src/delivery/outcome-writer.js';
import { createLogger } from '../../src/logger.js';
import type { AttemptRecord, ClaimedDelivery } from '../../src/outbox/claims.js';
import { enqueuePing } from '../../src/outbox/enqueue.js';
import { renderPing } from '../../src/outbox/events.js';
import { parseReceiverPolicy } from '../../src/network/receiver-policy.js';
import { createWebhook } from '../../src/webhooks/webhooks.js';
import { openTestDatabase, testKeyring, type TestDatabase } from '../support/test-service.js';

// The outcome writer on its own, against a real database: claims made as pings (created claimed), outcomes for them.
describe('outcome writer', () => {
  let t: TestDatabase;
  let webhookId: number;
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(line) });
  beforeAll(async () => {
    t = await openTestDatabase();
    webhookId = (await createWebhook(t.db, { url: 'http://127.0.0.1:9/hook', secret: 'outcome-writer-secret' }, { receiverPolicy: parseReceiverPolicy(), keyring: testKeyring() })).id;
  });
  afterAll(async () => t?.dispose());

  const claims = (count: number): Promise<ClaimedDelivery[]> =>
    Promise.all(Array.from({ length: count }, () => enqueuePing(t.db, webhookId, renderPing(webhookId), 60_000)));
  const sent = (claim: ClaimedDelivery): AttemptRecord => {
    const attemptedAt = Date.now();
    return {
      id: claim.id,
      leaseToken: claim.leaseToken,
      status: 'sent',
      nextAttemptAt: null,
      attemptedAt,
      responseStatus: 204,
      error: null,
      logEntry: { attemptedAt: new Date(attemptedAt).toISOString(), durationMs: 2, responseStatus: 204 },
    };
  };
  const rows = async (ids: number[]) =>
    (
      await t.db.query<{ status: string; locked_until: Date | null; attempt_log: unknown[] }>(
        'SELECT status, locked_until, attempt_log FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
        [ids],
      )
    ).rows;
  const until = async (check: () => boolean, timeoutMs = 10_000) => {
    for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > deadline) throw new Error('timed out');
    }
  };

  it('writes added outcomes together shortly after, without being asked, ending their claims', async () => {
    const writer = new OutcomeWriter(t.db, log);
    const claimed = await claims(3);
    for (const claim of claimed) writer.add(sent(claim));
    expect(writer.written).toBe(0); // batched: nothing is written on add
    await until(() => writer.written > 0);
    expect(writer.written).toBe(3); // the three in one write
    const written = await rows(claimed.map((c) => c.id));
    expect(written.map((r) => r.status)).toEqual(['sent', 'sent', 'sent']);
    expect(written.every((r) => r.locked_until === null && r.attempt_log.length === 1)).toBe(true);
  });

  it('keeps outcomes a failed write could not store, and writes them once the database can take them', async () => {
    const writer = new OutcomeWriter(t.db, log);
    const [claim] = await claims(1);
    await t.db.query('ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_away');
    try {
      writer.add(sent(claim!));
      await writer.settle(); // a few tries, then gives up for now rather than wait
      expect(writer.written).toBe(0);
      // settle() tried several times: the outage is told once, at warn, without the error object.
      const told = lines.filter((l) => l.includes('could not record delivery outcomes; retrying'));
      expect(told).toHaveLength(1);
      expect(JSON.parse(told[0]!)).toMatchObject({ level: 40, error: { code: '42P01' } });
    } finally {
      await t.db.query('ALTER TABLE webhook_deliveries_away RENAME TO webhook_deliveries');
    }
    await until(() => writer.written === 1); // retried on its own
    expect((await rows([claim!.id]))[0]!.status).toBe('sent');
    await until(() => lines.some((l) => l.includes('recording delivery outcomes works again')));
  });
});
