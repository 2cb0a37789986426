import { describe, expect, it } from 'vitest';
import { HeldBackWebhooks, HOLD_BACK_MS, unsignedPing } from '../../src/delivery/unreadable-secrets.js';
import { createLogger } from '../../src/logger.js';
import type { ClaimedDelivery } from '../../src/outbox/claims.js';

// Webhooks whose secrets this process cannot open, alone: a fake clock, no database. Processes with and without the
// new key, under load, are in test/secrets/key-change-under-load.test.ts.
let nextId = 1;
const claim = (webhookId: number): ClaimedDelivery => ({ id: nextId++, webhookId, attempts: 1, leaseToken: 7, isPing: false, payload: '{}', webhookVersion: 1 });

function setUp() {
  const clock = { now: 1_000 };
  const lines: { webhookId: number; reason: string }[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as { webhookId: number; reason: string }) });
  return { clock, lines, heldBack: new HeldBackWebhooks(log, () => clock.now) };
}

describe('webhooks held back for an unreadable secret', () => {
  it('gives back the deliveries of webhooks it cannot sign for, and sends the rest of the claim', () => {
    const { heldBack } = setUp();
    const claimed = [claim(1), claim(2), claim(1), claim(3)];
    const sorted = heldBack.sort(claimed, new Map([[1, 'sealed under key k2, which this process lacks']]));
    expect(sorted.giveBack).toEqual([claimed[0], claimed[2]]);
    expect(sorted.send).toEqual([claimed[1], claimed[3]]);
  });

  it('leaves them out of the claims for HOLD_BACK_MS, telling each webhook once', () => {
    const { clock, lines, heldBack } = setUp();
    heldBack.sort([claim(1), claim(2)], new Map([[1, 'key k2 missing']]));
    expect(heldBack.ids()).toEqual([1]);
    heldBack.sort([claim(1)], new Map([[1, 'key k2 missing']]));
    expect(lines.map((l) => [l.webhookId, l.reason])).toEqual([[1, 'key k2 missing']]);
    clock.now += HOLD_BACK_MS - 1;
    expect(heldBack.ids()).toEqual([1]);
    clock.now += 1;
    expect(heldBack.ids()).toEqual([]); // claimed for again, to try the secret again
  });

  it('forgets a webhook whose secret opens again, and tells it again if it fails later', () => {
    const { lines, heldBack } = setUp();
    heldBack.sort([claim(1)], new Map([[1, 'key k2 missing']]));
    const readable = heldBack.sort([claim(1), claim(2)], new Map());
    expect(readable.giveBack).toEqual([]);
    expect(readable.send).toHaveLength(2);
    expect(heldBack.ids()).toEqual([]);
    heldBack.sort([claim(1)], new Map([[1, 'key k3 missing']]));
    expect(lines.map((l) => l.reason)).toEqual(['key k2 missing', 'key k3 missing']);
  });
});

describe('a ping this process cannot sign', () => {
  it('ends failed at once, saying why, with no URL', () => {
    const ping = { ...claim(4), isPing: true };
    const record = unsignedPing(ping, 'key k2 missing', Date.UTC(2025, 0, 2));
    expect(record).toEqual({
      id: ping.id,
      leaseToken: 7,
      status: 'failed',
      nextAttemptAt: null,
      attemptedAt: Date.UTC(2025, 0, 2),
      responseStatus: null,
      error: "not sent: this process cannot open the webhook's secret (key k2 missing)",
      logEntry: { attemptedAt: '2025-01-02T00:00:00.000Z', url: '', durationMs: 0, error: "not sent: this process cannot open the webhook's secret (key k2 missing)" },
    });
  });
});
