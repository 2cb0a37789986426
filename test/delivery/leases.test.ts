import { describe, expect, it } from 'vitest';
import { HeldLeases, leaseMsFor, renewAfterMsFor } from '../../src/delivery/leases.js';
import { createLogger } from '../../src/logger.js';

// The leases of what a worker holds, alone: a fake clock and a fake renewal, no database. The renewal of real claims
// behind slow receivers is in slow-receivers.test.ts.
interface Held {
  id: number;
}

const TIMEOUT_MS = 10_000;

describe('lease terms', () => {
  it('covers the wait behind the attempts ahead, one attempt and a margin', () => {
    expect(leaseMsFor(TIMEOUT_MS, 4)).toBe(55_000);
    expect(leaseMsFor(TIMEOUT_MS, 8)).toBe(95_000);
  });

  it('renews with an attempt and the margin still left, and never before half the lease', () => {
    expect(renewAfterMsFor(55_000, TIMEOUT_MS)).toBe(40_000);
    expect(renewAfterMsFor(12_000, TIMEOUT_MS)).toBe(6_000);
  });
});

describe('held leases', () => {
  function setUp(renewal: (due: Held[], leaseMs: number) => Promise<unknown> = async () => undefined) {
    const clock = { now: 0 };
    const renewed: { ids: number[]; leaseMs: number }[] = [];
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => void lines.push(line) });
    const leases = new HeldLeases<Held>(
      (due, leaseMs) => {
        renewed.push({ ids: due.map((d) => d.id), leaseMs });
        return renewal(due, leaseMs);
      },
      () => ({ leaseMs: 60_000, renewAfterMs: 40_000 }),
      log,
      () => clock.now,
    );
    return { clock, renewed, lines, leases };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('renews nothing before renewAfterMs, then, in one call, what is still held', async () => {
    const { clock, renewed, leases } = setUp();
    const claim = [{ id: 1 }, { id: 2 }, { id: 3 }];
    leases.hold(claim, 0);
    clock.now = 39_999;
    leases.renewDue();
    expect(renewed).toEqual([]);
    leases.letGo(claim[1]!); // its attempt ended
    clock.now = 40_000;
    leases.renewDue();
    expect(renewed).toEqual([{ ids: [1, 3], leaseMs: 60_000 }]);
    await settle();
    // Renewed at 40 s: due again 40 s later.
    clock.now = 79_999;
    leases.renewDue();
    expect(renewed).toHaveLength(1);
    clock.now = 80_000;
    leases.renewDue();
    expect(renewed[1]).toEqual({ ids: [1, 3], leaseMs: 60_000 });
  });

  it('renews each claim on its own time, one renewal at a time', async () => {
    let finish = () => {};
    const { clock, renewed, leases } = setUp(() => new Promise<void>((resolve) => (finish = resolve)));
    leases.hold([{ id: 1 }], 0);
    leases.hold([{ id: 2 }], 10_000);
    clock.now = 40_000;
    leases.renewDue();
    expect(renewed).toEqual([{ ids: [1], leaseMs: 60_000 }]);
    clock.now = 50_000;
    leases.renewDue(); // the first renewal is still under way
    expect(renewed).toHaveLength(1);
    finish();
    await settle();
    leases.renewDue();
    expect(renewed[1]).toEqual({ ids: [2], leaseMs: 60_000 });
  });

  it('tries a failed renewal again after a second, warning once for the outage', async () => {
    let fail = true;
    const { clock, renewed, lines, leases } = setUp(async () => {
      if (fail) throw new Error('connection refused');
    });
    leases.hold([{ id: 1 }], 0);
    clock.now = 40_000;
    leases.renewDue();
    await settle();
    clock.now = 40_999;
    leases.renewDue();
    expect(renewed).toHaveLength(1);
    clock.now = 41_000;
    leases.renewDue();
    expect(renewed).toHaveLength(2);
    await settle();
    fail = false;
    clock.now = 42_000;
    leases.renewDue();
    await settle();
    expect(renewed).toHaveLength(3);
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([
      'could not renew the leases of deliveries held here; past their lease another claim may send them again',
      'lease renewals work again',
    ]);
  });

  it('forgets everything once nothing is held', () => {
    const { clock, renewed, leases } = setUp();
    leases.hold([{ id: 1 }], 0);
    leases.forget();
    clock.now = 100_000;
    leases.renewDue();
    expect(renewed).toEqual([]);
  });
});
