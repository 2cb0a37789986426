import { describe, expect, it } from 'vitest';
import { Lanes, STALLED_AFTER_MS, type LaneLimits } from '../../src/delivery/lanes.js';

// The lanes alone: no database, no receiver. What the worker does with them is in worker-processes and slow-receivers.
interface Claimed {
  id: number;
  webhookId: number;
}

const LIMITS: LaneLimits = { concurrency: 4, perWebhookConcurrency: 2, perWebhookClaimed: 4, perClaim: 2 };

let nextId = 1;
const claims = (webhookId: number, count: number): Claimed[] => Array.from({ length: count }, () => ({ id: nextId++, webhookId }));

/** Starts what the lanes allow, as the worker's loop does. */
function startAll(lanes: Lanes<Claimed>): Claimed[] {
  const started: Claimed[] = [];
  for (let next = lanes.startNext(); next; next = lanes.startNext()) started.push(next);
  return started;
}

describe('delivery lanes', () => {
  it('starts webhooks in turns, each within its own bound, and counts what is claimed and in flight', () => {
    const lanes = new Lanes<Claimed>(LIMITS);
    lanes.accept([...claims(1, 3), ...claims(2, 3)]);
    expect(lanes.claimed).toBe(6);
    const started = startAll(lanes);
    // Two each (perWebhookConcurrency), alternating: 1, 2, 1, 2.
    expect(started.map((d) => d.webhookId)).toEqual([1, 2, 1, 2]);
    expect(lanes.inFlight).toBe(4);
    expect(lanes.claimed).toBe(6);
  });

  it('lets a webhook with nothing in flight start one attempt past the process bound, and no more', () => {
    const lanes = new Lanes<Claimed>({ ...LIMITS, concurrency: 2 });
    lanes.accept(claims(1, 4));
    expect(startAll(lanes)).toHaveLength(2); // webhook 1 at its bound, the process full
    lanes.accept([...claims(2, 2), ...claims(3, 2), ...claims(4, 2)]);
    // Full: only webhooks with nothing in flight start, one each, up to perWebhookConcurrency beyond the bound.
    expect(startAll(lanes).map((d) => d.webhookId)).toEqual([2, 3]);
    expect(lanes.inFlight).toBe(4);
    expect(lanes.startNext()).toBeUndefined();
  });

  it('names the webhooks without room for a claim, and moves the epoch when one gains room or goes away', () => {
    const lanes = new Lanes<Claimed>(LIMITS);
    const first = claims(1, 4);
    lanes.accept([...first, ...claims(2, 1)]);
    // Webhook 1 holds 4 of 4: no room for a claim of 2. Webhook 2 holds 1: room for 3.
    expect(lanes.withoutRoom()).toEqual([1]);
    const started = startAll(lanes);
    const epoch = lanes.epoch;
    lanes.finished(started.find((d) => d.webhookId === 1)!);
    expect(lanes.withoutRoom()).toEqual([1]); // 3 held: still less than a claim's room
    expect(lanes.epoch).toBe(epoch);
    lanes.finished(started.filter((d) => d.webhookId === 1)[1]!);
    expect(lanes.withoutRoom()).toEqual([]); // 2 held: room for a claim of 2
    expect(lanes.epoch).toBe(epoch + 1);
    lanes.finished(started.find((d) => d.webhookId === 2)!);
    expect(lanes.epoch).toBe(epoch + 2); // webhook 2's lane is gone
    expect(lanes.claimed).toBe(2);
  });

  it('starts the next claim after the last webhook served, wrapping around', () => {
    const lanes = new Lanes<Claimed>(LIMITS);
    lanes.accept([...claims(3, 1), ...claims(5, 1)]);
    expect(lanes.turnAfter).toBe(5);
    lanes.accept([...claims(2, 1), ...claims(7, 1)]);
    expect(lanes.turnAfter).toBe(7);
    lanes.accept([...claims(1, 1), ...claims(2, 1)]);
    expect(lanes.turnAfter).toBe(2); // none after 7: the walk wrapped around
  });

  it('leaves a stalled lane out of the claim capacity, and counts it again once it moves', () => {
    let now = 0;
    const lanes = new Lanes<Claimed>(LIMITS, () => now);
    lanes.accept([...claims(1, 4), ...claims(2, 1)]);
    const started = startAll(lanes);
    expect(lanes.claimedByMovingLanes()).toBe(5);
    now = STALLED_AFTER_MS + 1;
    // Both lanes have attempts in flight and none finished for over STALLED_AFTER_MS.
    expect(lanes.claimedByMovingLanes()).toBe(0);
    lanes.finished(started.find((d) => d.webhookId === 1)!);
    expect(lanes.claimedByMovingLanes()).toBe(3); // webhook 1 moved: its 3 count again; webhook 2's lane is gone
  });

  it('gives back every delivery not started, keeping the lanes with attempts in flight', () => {
    const lanes = new Lanes<Claimed>(LIMITS);
    const one = claims(1, 3);
    const two = claims(2, 2);
    lanes.accept([...one, ...two]);
    lanes.startNext(); // one of webhook 1's
    const epoch = lanes.epoch;
    const waiting = lanes.takeWaiting();
    expect(waiting.map((d) => d.id).sort((a, b) => a - b)).toEqual([one[1]!.id, one[2]!.id, ...two.map((d) => d.id)]);
    expect(lanes.claimed).toBe(1);
    expect(lanes.epoch).toBe(epoch + 1);
    expect(lanes.startNext()).toBeUndefined();
    lanes.finished(one[0]!);
    expect(lanes.claimed).toBe(0);
    expect(lanes.inFlight).toBe(0);
    expect(lanes.takeWaiting()).toEqual([]);
  });

  it('scales the room of moving lanes with the claim depth, and keeps a stalled lane at depth 1', () => {
    let now = 0;
    const lanes = new Lanes<Claimed>(LIMITS, () => now);
    lanes.accept([...claims(1, 4), ...claims(2, 4)]);
    // Depth 1: each holds 4 of 4, no room for a claim of 2.
    expect(lanes.withoutRoom()).toEqual([1, 2]);
    const epoch = lanes.epoch;
    lanes.depth = 2;
    expect(lanes.epoch).toBe(epoch + 1); // lanes may have gained room: a loop waiting for room looks again
    // Depth 2: 8 a lane, claimed for once 4 are free; each holds 4.
    expect(lanes.withoutRoom()).toEqual([]);
    const started = startAll(lanes);
    now = STALLED_AFTER_MS + 1;
    // Webhook 2's attempts ended in time; webhook 1's have not: stalled, its lane is back to 4 and full.
    for (const d of started.filter((s) => s.webhookId === 2)) lanes.finished(d);
    expect(lanes.withoutRoom()).toEqual([1]);
    expect(lanes.finishedCount).toBe(2);
    expect(() => (lanes.depth = 0)).toThrow(RangeError);
  });

  it('refuses to finish an attempt that was never started', () => {
    const lanes = new Lanes<Claimed>(LIMITS);
    const [waiting] = claims(1, 1);
    lanes.accept([waiting!]);
    expect(() => lanes.finished({ id: 0, webhookId: 9 })).toThrow('webhook 9 has no attempt in flight');
    expect(() => lanes.finished(waiting!)).toThrow('webhook 1 has no attempt in flight');
  });
});
