import { describe, expect, it } from 'vitest';
import type { Connection, KuzuValue } from 'kuzu';
import { matchOfRow } from '../../src/alerts/alert-rows.js';
import { hashTarget, identityOfKey, matchKey, NO_MATCH, TOO_LARGE } from '../../src/graph/match-identity.js';
import { keyOfRow } from '../../src/graph/row-identity.js';
import { Catalogue } from '../../src/graph/embedded/kuzu-catalogue.js';
import { matchKeysOf, nodeIdsByRef } from '../../src/graph/embedded/row-refs.js';
import { decodeWireRow } from '../../src/graph/embedded/kuzu-protocol.js';

// Values as Kùzu's Node API gives them: nodes, edges (their ends by internal id), paths, lists, maps.
const clients = new Catalogue();
clients.nodeTables.set('Client', { name: 'Client', primaryKey: 'id', primaryKeyType: 'STRING' });
clients.relTables.set('KNOWS', { hasId: false });
clients.relTables.set('PAID', { hasId: true });
const alice = { _id: { table: 0, offset: 0 }, _label: 'Client', id: 'alice' };
const bob = { _id: { table: 0, offset: 1 }, _label: 'Client', id: 'bob', name: 'Bob' };
const knows = { _id: { table: 1, offset: 0 }, _label: 'KNOWS', _src: alice._id, _dst: bob._id };
const path = { _nodes: [alice, bob], _rels: [knows] };
// An edge named by its own id property, and a node of a table the catalogue does not know (which has no id).
const paid = { _id: { table: 2, offset: 0 }, _label: 'PAID', _src: alice._id, _dst: bob._id, id: 'p-1' };
const stranger = { _id: { table: 9, offset: 3 }, _label: 'Stranger' };
// A key JSON would escape (a quote, a backslash, a newline): its id is URI-encoded, plain for JSON.
const odd = { _id: { table: 0, offset: 7 }, _label: 'Client', id: 'o"d\\d\né😀' };
// The ends of an edge met without them are looked up by the Kùzu process (the embedded graph's test does it on
// Kùzu): here every edge's ends are in its batch, in a column of their own that names no match (a map).
const ENDS = { ends: [alice, bob] };
const noConnection = undefined as unknown as Connection;

/** A row of `values`, with the ends column. */
function rowOf(values: unknown[]): { row: Record<string, KuzuValue>; columns: string[] } {
  const columns = [...values.map((_, i) => `c${i}`), 'ends'];
  return { row: Object.fromEntries([...values.map((v, i) => [`c${i}`, v]), ['ends', ENDS]]) as Record<string, KuzuValue>, columns };
}

/** A row as the Kùzu process hands it over when it is picked: its wire form, the ids made of the batch's refs. */
async function moved(values: unknown[]) {
  const { row, columns } = rowOf(values);
  const ids = nodeIdsByRef(await clients.batchRefs(noConnection, [row], columns));
  return decodeWireRow(clients.wireRows([row], columns, false, ids)[0]!, columns, 0);
}

/**
 * The identity the service makes of a row from what the Kùzu process sends first (the ids of its nodes and edges,
 * in numbers), and the one it makes of the same row moved whole.
 */
async function bothSides(values: unknown[]): Promise<{ child: string; service: string }> {
  const { row, columns } = rowOf(values);
  const [key] = matchKeysOf(await clients.batchRefs(noConnection, [row], columns));
  return { child: identityOfKey(key!), service: identityOfKey(keyOfRow(await moved(values))) };
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
      [paid],
      [alice, paid],
      [knows, bob],
      // An edge inside a map: its ends are named in the map's wire form, the match is not its.
      [alice, { via: knows }],
      [odd, alice, bob],
    ];
    const identities = [];
    for (const row of rows) {
      const { child, service } = await bothSides(row);
      expect(child, JSON.stringify(row)).toBe(service);
      // What a run records for it: the hash of matchOfRow's identity.
      expect(child).toBe(hashTarget(matchOfRow(await moved(row), null, [])!.identity));
      identities.push(child);
    }
    // Order and repeats do not change it; the same nodes and edges through a path or listed are one identity.
    expect(identities[2]).toBe(identities[3]);
    expect(identities[2]).toBe(identities[4]);
    expect(identities[4]).toBe(identities[5]);
    expect(identities[4]).toBe(identities[6]);
    expect(identities[0]).toBe(identities[7]);
    expect(new Set(identities.slice(0, 3)).size).toBe(3);
    expect(new Set([identities[1], ...identities.slice(8, 11)]).size).toBe(4);
    expect(identities[11]).toBe(identities[0]);
  });

  it('fails a row holding an item of a table the catalogue does not know, naming it: no id of internal offsets', async () => {
    const { row, columns } = rowOf([stranger, knows]);
    await expect(clients.batchRefs(noConnection, [row], columns)).rejects.toThrow(/^the table "Stranger" is not in the embedded graph's catalogue/);
    expect(() => clients.wireRows([row], columns, false, new Map())).toThrow(/"Stranger"/);
  });

  it('marks a row with no node or edge, and one with more than a match may hold, the same on both sides', async () => {
    expect(await bothSides(['text', 1, { a: 1 }])).toEqual({ child: NO_MATCH, service: NO_MATCH });
    const many = [Array.from({ length: 10_001 }, (_, i) => ({ _id: { table: 0, offset: 100 + i }, _label: 'Client', id: `dot-${i}` }))];
    expect(await bothSides(many)).toEqual({ child: TOO_LARGE, service: TOO_LARGE });
  });

  it('joins plain ids into the text JSON would make of them, whatever holds none, one or many', () => {
    const shapes: [string[], string[]][] = [[['a'], []], [[], ['e']], [['b', 'a', 'b'], ['e2', 'e1']], [['n1', 'n3', 'n2'], ['e']]];
    for (const [nodes, edges] of shapes) expect(matchKey(nodes, edges, true), JSON.stringify([nodes, edges])).toBe(matchKey(nodes, edges));
    expect(matchKey(['b', 'a'], ['e'], true)).toBe('[["a","b"],["e"]]');
  });
});
