import { describe, expect, it } from 'vitest';
import type { Connection, KuzuValue } from 'kuzu';
import { identityOfRow, matchOfRow } from '../../src/alerts/alert-rows.js';
import { identityOfKey, NO_MATCH, TOO_LARGE } from '../../src/graph/match-identity.js';
import { hashTarget } from '../../src/alerts/target.js';
import { Catalogue } from '../../src/graph/embedded/kuzu-catalogue.js';
import { decodeWireRow } from '../../src/graph/embedded/kuzu-protocol.js';

// Values as Kùzu's Node API gives them: nodes, edges (their ends by internal id), paths, lists, maps.
const clients = new Catalogue();
clients.nodeTables.set('Client', { name: 'Client', primaryKey: 'id', primaryKeyType: 'STRING' });
clients.relTables.set('KNOWS', { hasId: false });
const alice = { _id: { table: 0, offset: 0 }, _label: 'Client', id: 'alice' };
const bob = { _id: { table: 0, offset: 1 }, _label: 'Client', id: 'bob', name: 'Bob' };
const knows = { _id: { table: 1, offset: 0 }, _label: 'KNOWS', _src: alice._id, _dst: bob._id };
const path = { _nodes: [alice, bob], _rels: [knows] };
const noConnection = undefined as unknown as Connection;
// The ends of an edge met without them are looked up by the Kùzu process; here they are known already, from a
// batch that held them.
const known = async () => (await clients.batchIds(noConnection, [{ a: alice, b: bob } as Record<string, KuzuValue>], ['a', 'b'], new Map())).known;

/**
 * The identity the Kùzu process sends of a row (its match key, from Kùzu's values, hashed by the service), and the
 * one the service makes of the same row moved whole (its wire form, decoded).
 */
async function bothSides(values: unknown[]): Promise<{ child: string; service: string }> {
  const columns = values.map((_, i) => `c${i}`);
  const row = Object.fromEntries(values.map((v, i) => [`c${i}`, v])) as Record<string, KuzuValue>;
  const ids = await clients.batchIds(noConnection, [row], columns, await known());
  const [wire] = clients.wireRows([row], columns, false, ids);
  return { child: identityOfKey(clients.rowKey(row, columns, ids)), service: identityOfRow(decodeWireRow(wire!, columns, 0)) };
}

describe('match identity: the Kùzu process and the service make the same', () => {
  it('agrees on nodes, edges, paths, lists and maps, whatever the order and repeats, and with what is recorded', async () => {
    const rows: unknown[][] = [
      [alice],
      [knows],
      [alice, knows, bob],
      [bob, knows, alice, 'text', 3],
      [path],
      [[alice, [bob, knows]], null],
      [path, alice, [path]],
      // A map's values name no match, on either side.
      [alice, { friend: bob }],
    ];
    const identities = [];
    for (const row of rows) {
      const { child, service } = await bothSides(row);
      expect(child, JSON.stringify(row)).toBe(service);
      // What a run records for it: the hash of matchOfRow's identity.
      const columns = row.map((_, i) => `c${i}`);
      const asRow = Object.fromEntries(row.map((v, i) => [`c${i}`, v])) as Record<string, KuzuValue>;
      const [wire] = clients.wireRows([asRow], columns, false, await clients.batchIds(noConnection, [asRow], columns, await known()));
      expect(child).toBe(hashTarget(matchOfRow(decodeWireRow(wire!, columns, 0), null, [])!.identity));
      identities.push(child);
    }
    // Order and repeats do not change it; the same nodes and edges through a path or listed are one identity.
    expect(identities[2]).toBe(identities[3]);
    expect(identities[2]).toBe(identities[4]);
    expect(identities[4]).toBe(identities[5]);
    expect(identities[4]).toBe(identities[6]);
    expect(identities[0]).toBe(identities[7]);
    expect(new Set(identities.slice(0, 3)).size).toBe(3);
  });

  it('marks a row with no node or edge, and one with more than a match may hold, the same on both sides', async () => {
    expect(await bothSides(['text', 1, { a: 1 }])).toEqual({ child: NO_MATCH, service: NO_MATCH });
    const many = [Array.from({ length: 10_001 }, (_, i) => ({ _id: { table: 0, offset: 100 + i }, _label: 'Client', id: `dot-${i}` }))];
    expect(await bothSides(many)).toEqual({ child: TOO_LARGE, service: TOO_LARGE });
  });
});
