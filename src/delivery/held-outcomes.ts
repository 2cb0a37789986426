import type { OutcomeWriter } from './outcome-writer.js';

/**
 * Outcomes held since the database went away are written before anything is claimed again: past their lease their
 * rows are due again, and a claim that came first sent each of them a second time (198 duplicates after a 60 s
 * outage). Throws while they still cannot be written: the drain ends, and the next firing tries again.
 */
export async function writeHeldOutcomes(outcomes: Pick<OutcomeWriter, 'holding' | 'flush'>): Promise<void> {
  if (!outcomes.holding) return;
  await outcomes.flush();
  if (outcomes.holding) throw new Error('the outcomes of attempts made before the database went away cannot be written yet; nothing is claimed until they are');
}
