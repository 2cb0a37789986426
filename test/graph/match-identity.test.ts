import { describe, expect, it } from 'vitest';
import { identityOfRow, matchOfRow } from '../../src/alerts/alert-rows.js';
import { NO_MATCH, TOO_LARGE, wireRowIdentity } from '../../src/graph/match-identity.js';
import { hashTarget } from '../../src/alerts/target.js';
import { decodeWireRow, type WireRow } from '../../src/graph/embedded/kuzu-protocol.js';

const alice = { n: ['Client:alice', 'Client'] as [string, string] };
const bob = { n: ['Client:bob', 'Client', { name: 'Bob' }] as [string, string, Record<string, string>] };
const knows = { e: ['KNOWS:Client:alice->Client:bob', 'KNOWS', 'Client:alice', 'Client:bob'] as [string, string, string, string] };
const path = { p: [[alice.n, bob.n], [knows.e]] as [typeof alice.n[], typeof knows.e[]] };

/** The identity the Kùzu process makes of a wire row, and the one the service makes of the same row decoded. */
function bothSides(row: WireRow): { child: string; service: string } {
  const columns = row.map((_, i) => `c${i}`);
  return { child: wireRowIdentity(row), service: identityOfRow(decodeWireRow(row, columns, 0)) };
}

describe('match identity: the Kùzu process and the service make the same', () => {
  it('agrees on nodes, edges, paths, lists and maps, whatever the order and repeats, and with what is recorded', () => {
    const rows: WireRow[] = [
      [alice],
      [knows],
      [alice, knows, bob],
      [bob, knows, alice, 'text', 3],
      [path],
      [[alice, [bob, knows]], null],
      [path, alice, [path]],
      // A map's values name no match, on either side.
      [alice, { m: { friend: bob } }],
    ];
    const identities = rows.map((row) => {
      const { child, service } = bothSides(row);
      expect(child, JSON.stringify(row)).toBe(service);
      // What a run records for it: the hash of matchOfRow's identity.
      const columns = row.map((_, i) => `c${i}`);
      expect(child).toBe(hashTarget(matchOfRow(decodeWireRow(row, columns, 0), null, [])!.identity));
      return child;
    });
    // Order and repeats do not change it; the same nodes and edges through a path or listed are one identity.
    expect(identities[2]).toBe(identities[3]);
    expect(identities[2]).toBe(identities[4]);
    expect(identities[4]).toBe(identities[5]);
    expect(identities[4]).toBe(identities[6]);
    expect(identities[0]).toBe(identities[7]);
    expect(new Set(identities.slice(0, 3)).size).toBe(3);
  });

  it('marks a row with no node or edge, and one with more than a match may hold, the same on both sides', () => {
    expect(bothSides(['text', 1, { m: { a: 1 } }])).toEqual({ child: NO_MATCH, service: NO_MATCH });
    const many: WireRow = [Array.from({ length: 10_001 }, (_, i) => ({ n: [`Dot:${i}`, 'Dot'] as [string, string] }))];
    expect(bothSides(many)).toEqual({ child: TOO_LARGE, service: TOO_LARGE });
  });
});
