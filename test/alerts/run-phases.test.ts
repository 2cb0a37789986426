import { describe, expect, it } from 'vitest';
import { knownAs } from '../../src/alerts/recorded-matches.js';
import { addOversized, classifyBatch, NO_OVERSIZED, oversizedProblems, type ReadBefore } from '../../src/alerts/run-classify.js';
import { matchKey, NO_MATCH, TOO_LARGE } from '../../src/graph/match-identity.js';

const key = (...nodes: string[]) => matchKey(nodes, []);
const fresh = (over: Partial<ReadBefore> = {}): ReadBefore => ({ rowsRead: 0, maxMatches: 1000, met: new Set(), known: new Set(), ...over });

describe('an alert run classifies a batch (pure)', () => {
  it('looks up the first row of each match it meets, skipping rows of no match and repeats within the batch', () => {
    const keys = [key('a'), NO_MATCH, key('b'), key('a'), key('b', 'c'), key('b')];
    const classified = classifyBatch(keys, fresh());
    expect(classified).toEqual({
      rows: 6,
      capped: false,
      firstRow: 1,
      met: [key('a'), key('b'), key('b', 'c')],
      known: 0,
      candidates: [0, 2, 4],
      candidateNames: [key('a'), key('b'), key('b', 'c')],
      oversized: NO_OVERSIZED,
    });
  });

  it('counts the matches this process knows recorded without looking them up, and skips those met in earlier batches', () => {
    const met = new Set([key('a')]);
    const known = new Set([key('b')]);
    const classified = classifyBatch([key('a'), key('b'), key('c'), key('b')], fresh({ rowsRead: 10, met, known }));
    expect(classified).toMatchObject({ rows: 4, firstRow: 11, met: [key('b'), key('c')], known: 1, candidates: [2], candidateNames: [key('c')] });
    // Pure: what the run met before is left as it was (the run adds `met` itself).
    expect([...met]).toEqual([key('a')]);
  });

  it('names a long key by its hash, as the process knows it', () => {
    const long = key(...Array.from({ length: 40 }, (_, i) => `node-${i}`));
    expect(long.length).toBeGreaterThan(128);
    const classified = classifyBatch([long], fresh());
    expect(classified.candidateNames).toEqual([knownAs(long)]);
    expect(classified.candidateNames[0]).not.toBe(long);
  });

  it('reads no row past maxMatches, and says it stopped there', () => {
    const classified = classifyBatch([key('a'), key('b'), key('c')], fresh({ rowsRead: 8, maxMatches: 10 }));
    expect(classified).toMatchObject({ rows: 2, capped: true, candidates: [0, 1] });
    expect(classifyBatch([key('a')], fresh({ rowsRead: 10, maxMatches: 10 }))).toMatchObject({ rows: 0, capped: true, candidates: [] });
    expect(classifyBatch([key('a'), key('b')], fresh({ rowsRead: 8, maxMatches: 10 })).capped).toBe(false);
  });

  it('counts oversized rows with the run number of the first, summed over a query\'s batches into one problem', () => {
    const first = classifyBatch([key('a'), TOO_LARGE, TOO_LARGE], fresh({ rowsRead: 100 }));
    expect(first.oversized).toEqual({ rows: 2, first: 102 });
    const second = classifyBatch([TOO_LARGE], fresh({ rowsRead: 103 }));
    const query = addOversized(addOversized(NO_OVERSIZED, first.oversized), second.oversized);
    expect(query).toEqual({ rows: 3, first: 102 });
    expect(oversizedProblems(7, query)).toEqual([
      { source: 'alertQuery', queryId: 7, error: { key: 'match_too_large', message: expect.stringMatching(/^3 rows were not recorded \(the first: row 102\)/) }, partial: true },
    ]);
    expect(oversizedProblems(7, NO_OVERSIZED)).toEqual([]);
  });
});
