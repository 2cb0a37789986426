import { describe, expect, it } from 'vitest';
import { knownAs, RecordedMatches } from '../../src/alerts/recorded-matches.js';
import { identityOfKey } from '../../src/graph/match-identity.js';

describe('the matches a process knows each alert recorded', () => {
  it('knows them at the epoch it learnt them at, and forgets them at another', () => {
    const known = new RecordedMatches(10);
    known.learn(1, '0', ['a', 'b']);
    expect([...known.known(1, '0')]).toEqual(['a', 'b']);
    expect(known.known(2, '0').size).toBe(0);
    expect(known.known(1, '1').size).toBe(0);
    // Forgotten, not kept for the old epoch.
    expect(known.known(1, '0').size).toBe(0);
    expect(known.size).toBe(0);
    known.learn(1, '0', ['a']);
    known.learn(1, '1', ['b']);
    expect([...known.known(1, '1')]).toEqual(['b']);
  });

  it('holds at most its bound, forgetting the alerts run least recently first, and one alert past it in part', () => {
    const known = new RecordedMatches(4);
    known.learn(1, '0', ['a', 'b']);
    known.learn(2, '0', ['c']);
    known.known(1, '0');
    known.learn(3, '0', ['d', 'e']);
    // Alert 2 was run last before 1: forgotten first.
    expect(known.known(2, '0').size).toBe(0);
    expect([...known.known(1, '0')]).toEqual(['a', 'b']);
    expect(known.size).toBe(4);
    known.learn(4, '0', ['f', 'g', 'h', 'i', 'j', 'k']);
    expect(known.size).toBe(4);
    expect([...known.known(4, '0')]).toEqual(['f', 'g', 'h', 'i']);
    expect(known.known(1, '0').size + known.known(3, '0').size).toBe(0);
    // Learning again what it knows takes no room.
    known.learn(4, '0', ['f', 'g']);
    expect(known.size).toBe(4);
  });

  it('keeps a long key as its hash, which no key can be mistaken for', () => {
    const short = '[["Client:a"],[]]';
    const long = `[["${'n'.repeat(200)}"],[]]`;
    expect(knownAs(short)).toBe(short);
    expect(knownAs(long)).toBe(identityOfKey(long));
    expect(knownAs(long)).toMatch(/^[0-9a-f]{64}$/);
  });
});
