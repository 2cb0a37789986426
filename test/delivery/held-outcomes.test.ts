import { describe, expect, it } from 'vitest';
import { writeHeldOutcomes } from '../../src/delivery/held-outcomes.js';

// The gate before a claim, alone: a fake outcome writer. The outage itself is in
// test/operations/process-resilience.test.ts.
function writer(holding: boolean, writes: boolean) {
  const calls = { flush: 0 };
  const outcomes = {
    holding,
    flush: async () => {
      calls.flush++;
      if (writes) outcomes.holding = false;
    },
  };
  return { outcomes, calls };
}

describe('outcomes held through an outage', () => {
  it('costs nothing when none are held', async () => {
    const { outcomes, calls } = writer(false, true);
    await writeHeldOutcomes(outcomes);
    expect(calls.flush).toBe(0);
  });

  it('are written before the next claim', async () => {
    const { outcomes, calls } = writer(true, true);
    await writeHeldOutcomes(outcomes);
    expect(calls.flush).toBe(1);
    expect(outcomes.holding).toBe(false);
  });

  it('stop the drain while they still cannot be written: nothing is claimed until they are', async () => {
    const { outcomes } = writer(true, false);
    await expect(writeHeldOutcomes(outcomes)).rejects.toThrow('nothing is claimed until they are');
  });
});
