import { describe, expect, it } from 'vitest';
import { readableAnswer, readableEdge, readableGraph, readableNode } from '../../src/access/graph-filter.js';
import { accessFromRights, builtinAccess, type SourceAccess } from '../../src/access/source-access.js';
import type { TargetType } from '../../src/access/access-rights.js';
import type { Principal } from '../../src/auth/principal.js';
import type { GraphEdge, GraphNode, PropertyValue } from '../../src/graph/graph-schemas.js';
import { byNames, graphEdge, graphNode } from '../../src/graph/items.js';

// The filter of issue 40, item 3, on hand-made items and rights: what one caller's groups may read of a graph answer.

type Right = [targetType: TargetType, targetName: string, type: string, targetItemType?: string];

/** The access a member of groups with these rights has (each argument one group's rights), as loadSourceAccess makes it. */
function accessOf(propertyKeyRights: boolean, ...groups: Right[][]): SourceAccess {
  const rows = groups.flatMap((rights, index) =>
    (rights.length ? rights : [undefined]).map((right) => ({
      property_key_access_rights: propertyKeyRights,
      group_id: 10 + index,
      target_type: right?.[0] ?? null,
      target_item_type: right?.[3] ?? (right ? '' : null),
      target_name: right?.[1] ?? null,
      type: right?.[2] ?? null,
    })),
  );
  return accessFromRights('fraud', propertyKeyRights, rows);
}

const props = (entries: Record<string, PropertyValue>) => Object.assign(byNames<PropertyValue>(), entries);
const alice = graphNode('Person:alice', ['Person'], props({ name: 'Alice', ssn: '123' }), 1);
const bob = graphNode('Person:bob', ['Person'], props({ name: 'Bob', ssn: '456' }), 1);
const acme = graphNode('Company:acme', ['Company'], props({ name: 'Acme' }), 1);
// Two labels, as a Neo4j node may have.
const carol = graphNode('4:carol', ['Person', 'Company'], props({ name: 'Carol', ssn: '789' }), 1);
const dan = graphNode('4:dan', ['Person', 'Customer'], props({ name: 'Dan', ssn: '000', tier: 'gold' }), 1);
const bare = graphNode('4:bare', [], props({}), 1);
const knows = graphEdge('KNOWS:alice->bob', 'KNOWS', alice.id, bob.id, props({ since: 2020 }), 1);
const worksAt = graphEdge('WORKS_AT:alice->acme', 'WORKS_AT', alice.id, acme.id, props({ role: 'CFO', salary: 100 }), 1);
const knowsDan = graphEdge('KNOWS:bob->dan', 'KNOWS', bob.id, dan.id, props({ since: 2021 }), 1);
const everything = (): { nodes: GraphNode[]; edges: GraphEdge[] } => ({ nodes: [alice, bob, acme, carol, dan, bare], edges: [knows, worksAt, knowsDan] });
const ids = (items: { id: string }[]) => items.map((item) => item.id);

describe('the graph filter: what a caller may read of nodes, edges and properties', () => {
  it('answers the items as they are to a caller who reads the whole graph: the same arrays and bytes, nothing parsed', () => {
    const analyst = builtinAccess({ groupIds: [2] } as Principal, 'fraud')!;
    const fullGroup = accessOf(false, [['nodeCategory', '*', 'read'], ['edgeType', '*', 'write']]);
    for (const access of [analyst, fullGroup]) {
      expect(access.readsWholeGraph).toBe(true);
      const graph = everything();
      const readable = readableGraph(access, graph);
      expect(readable.nodes).toBe(graph.nodes);
      expect(readable.edges).toBe(graph.edges);
      expect(readable.truncatedByAccess).toBe(false);
      // Not JSON at all: parsing it would throw.
      const answer = { nodes: Buffer.from('not json'), edges: Buffer.from('[also not'), truncated: false };
      const bytes = readableAnswer(access, answer);
      expect(bytes.nodes).toBe(answer.nodes);
      expect(bytes.edges).toBe(answer.edges);
      expect(bytes.truncatedByAccess).toBe(false);
    }
  });

  it('leaves out a node unless each of its categories is readable, and a node of none unless * is', () => {
    const personOnly = accessOf(false, [['nodeCategory', 'Person', 'read'], ['nodeCategory', 'Customer', 'edit'], ['edgeType', '*', 'read']]);
    const readable = readableGraph(personOnly, everything());
    // carol is a Person and a Company: out; dan a Person and a Customer (edit grants read): in.
    expect(ids(readable.nodes)).toEqual(['Person:alice', 'Person:bob', '4:dan']);
    expect(readable.truncatedByAccess).toBe(true);
    expect(readableNode(personOnly, bare)).toBeUndefined();
    expect(readableNode(accessOf(false, [['nodeCategory', '*', 'read']]), bare)).toBe(bare);
  });

  it('takes a specific none over the group\'s *, and the most of several groups', () => {
    const allButCompanyRights: Right[] = [['nodeCategory', '*', 'read'], ['nodeCategory', 'Company', 'none'], ['edgeType', '*', 'read'], ['edgeType', 'WORKS_AT', 'none']];
    const allButCompany = accessOf(false, allButCompanyRights);
    expect(allButCompany.readsWholeGraph).toBe(false);
    const readable = readableGraph(allButCompany, everything());
    expect(ids(readable.nodes)).toEqual(['Person:alice', 'Person:bob', '4:dan', '4:bare']);
    expect(ids(readable.edges)).toEqual(['KNOWS:alice->bob', 'KNOWS:bob->dan']);
    // A second group that reads Company and WORKS_AT gives them back: rights add up.
    const withSecond = accessOf(false, allButCompanyRights, [
      ['nodeCategory', 'Company', 'read'],
      ['edgeType', 'WORKS_AT', 'read'],
    ]);
    expect(ids(readableGraph(withSecond, everything()).nodes)).toEqual(['Person:alice', 'Person:bob', 'Company:acme', '4:carol', '4:dan', '4:bare']);
    expect(ids(readableGraph(withSecond, everything()).edges)).toEqual(['KNOWS:alice->bob', 'WORKS_AT:alice->acme', 'KNOWS:bob->dan']);
  });

  it('leaves out an edge of a type not readable, beside a hidden end, or (in a query answer) beside an end the answer lacks', () => {
    const access = accessOf(false, [['nodeCategory', 'Person', 'read'], ['edgeType', 'KNOWS', 'read'], ['edgeType', 'WORKS_AT', 'read']]);
    // WORKS_AT's end acme is a Company: its id would tell the hidden node.
    expect(ids(readableGraph(access, { nodes: [alice, bob, acme], edges: [knows, worksAt] }).edges)).toEqual(['KNOWS:alice->bob']);
    // bob is readable, but not in the answer: the edge is left out of a query's answer.
    const answer = readableGraph(access, { nodes: [alice], edges: [knows] });
    expect(answer).toEqual({ nodes: [alice], edges: [], truncatedByAccess: true });
    // A lookup or a drawing that fetched the end knows its categories.
    const known = (id: string) => (id === bob.id ? bob.data.categories : id === acme.id ? acme.data.categories : undefined);
    expect(readableGraph(access, { nodes: [alice], edges: [knows, worksAt] }, known)).toEqual({ nodes: [alice], edges: [knows], truncatedByAccess: true });
    // An end given among the nodes and hidden is hidden whatever endCategories says.
    expect(readableGraph(access, { nodes: [alice, acme], edges: [worksAt] }, () => ['Person']).edges).toEqual([]);
    // An end whose categories are not known is not readable.
    expect(readableGraph(access, { nodes: [], edges: [knows] }, () => undefined).edges).toEqual([]);
    expect(readableEdge(access, knows, () => true)).toBe(knows);
    expect(readableEdge(accessOf(false, [['nodeCategory', '*', 'read'], ['edgeType', 'WORKS_AT', 'read']]), knows, () => true)).toBeUndefined();
    // The ends beside `data` are judged too.
    const forged = { ...knows, target: acme.id };
    expect(readableEdge(access, forged, (id) => id !== acme.id)).toBeUndefined();
  });

  it('removes the properties not readable when property-key rights are on, and keeps every one when they are off', () => {
    const rights: Right[] = [
      ['nodeCategory', '*', 'read'],
      ['edgeType', '*', 'read'],
      ['nodePropertyKey', 'name', 'read', 'Person'],
      ['nodePropertyKey', '*', 'read', 'Customer'],
      ['nodePropertyKey', 'name', 'read', 'Company'],
      ['edgePropertyKey', 'role', 'read', 'WORKS_AT'],
      ['edgePropertyKey', '*', 'read', 'KNOWS'],
    ];
    const off = accessOf(false, rights);
    expect(off.readsWholeGraph).toBe(true);
    expect(readableGraph(off, everything()).nodes[0]).toBe(alice);

    const on = accessOf(true, rights);
    expect(on.readsWholeGraph).toBe(false);
    const readable = readableGraph(on, everything());
    const propertiesOf = (items: (GraphNode | GraphEdge)[]) => Object.fromEntries(items.map((item) => [item.id, { ...item.data.properties }]));
    expect(propertiesOf(readable.nodes)).toEqual({
      'Person:alice': { name: 'Alice' },
      'Person:bob': { name: 'Bob' },
      'Company:acme': { name: 'Acme' },
      '4:carol': { name: 'Carol' },
      // A property is readable when one of the node's categories grants it: Customer grants every key.
      '4:dan': { name: 'Dan', ssn: '000', tier: 'gold' },
      '4:bare': {},
    });
    expect(propertiesOf(readable.edges)).toEqual({ 'KNOWS:alice->bob': { since: 2020 }, 'WORKS_AT:alice->acme': { role: 'CFO' }, 'KNOWS:bob->dan': { since: 2021 } });
    expect(readable.truncatedByAccess).toBe(true);
    // Items whose every property is readable are the items given; the others are copies, the given ones untouched.
    expect(readable.nodes.find((n) => n.id === '4:dan')).toBe(dan);
    expect(alice.data.properties).toEqual({ name: 'Alice', ssn: '123' });
    expect(worksAt.data.properties).toEqual({ role: 'CFO', salary: 100 });

    // Every key of every type: nothing removed, nothing said to be.
    const all = accessOf(true, [['nodeCategory', '*', 'read'], ['edgeType', '*', 'read'], ['nodePropertyKey', '*', 'read', '*'], ['edgePropertyKey', '*', 'read', '*']]);
    expect(readableGraph(all, everything())).toEqual({ ...everything(), truncatedByAccess: false });
    // No property-key right at all: items without properties.
    const none = accessOf(true, [['nodeCategory', '*', 'read'], ['edgeType', '*', 'read']]);
    expect(readableGraph(none, { nodes: [alice], edges: [] }).nodes[0]!.data.properties).toEqual({});
  });

  it('decides each property by its own kind and types, however many items ask the same access', () => {
    // A node category and an edge type of one name, two labels, and a label spelled as their list: four rules.
    const access = accessOf(true, [
      ['nodeCategory', '*', 'read'],
      ['edgeType', '*', 'read'],
      ['nodePropertyKey', 'a', 'read', 'KNOWS'],
      ['edgePropertyKey', 'b', 'read', 'KNOWS'],
      ['nodePropertyKey', 'c', 'read', 'Person'],
      ['nodePropertyKey', 'd', 'read', '["Person","Company"]'],
    ]);
    const all = props({ a: 1, b: 2, c: 3, d: 4 });
    const keysOf = (item: GraphNode | GraphEdge | undefined) => Object.keys(item!.data.properties);
    for (let round = 0; round < 2; round++) {
      expect(keysOf(readableNode(access, graphNode('n', ['KNOWS'], all, 1)))).toEqual(['a']);
      expect(keysOf(readableEdge(access, graphEdge('e', 'KNOWS', 'x', 'y', all, 1), () => true))).toEqual(['b']);
      expect(keysOf(readableNode(access, graphNode('p', ['Person', 'Company'], all, 1)))).toEqual(['c']);
      expect(keysOf(readableNode(access, graphNode('q', ['["Person","Company"]'], all, 1)))).toEqual(['d']);
    }
  });

  it('keeps a property named __proto__ as a property, readable or not', () => {
    const odd = graphNode('Person:odd', ['Person'], props({ ['__proto__']: 'x', name: 'Odd', ssn: '1' }), 1);
    const access = accessOf(true, [['nodeCategory', '*', 'read'], ['nodePropertyKey', '__proto__', 'read', 'Person'], ['nodePropertyKey', 'name', 'read', 'Person']]);
    const kept = readableNode(access, odd)!;
    expect(Object.keys(kept.data.properties)).toEqual(['__proto__', 'name']);
    expect(JSON.parse(JSON.stringify(kept)).data.properties).toEqual(JSON.parse('{"__proto__":"x","name":"Odd"}'));
    const hidden = accessOf(true, [['nodeCategory', '*', 'read'], ['nodePropertyKey', 'ssn', 'read', 'Person']]);
    expect(Object.keys(readableNode(hidden, odd)!.data.properties)).toEqual(['ssn']);
  });

  it('filters a query answer\'s JSON bytes, and sends the bytes given when nothing was left out', () => {
    const access = accessOf(false, [['nodeCategory', 'Person', 'read'], ['edgeType', 'KNOWS', 'read']]);
    const answer = { nodes: Buffer.from(JSON.stringify([alice, bob, acme])), edges: Buffer.from(JSON.stringify([knows, worksAt])), truncated: false };
    const readable = readableAnswer(access, answer);
    expect(readable.truncatedByAccess).toBe(true);
    expect(JSON.parse(readable.nodes.toString())).toEqual(JSON.parse(JSON.stringify([alice, bob])));
    expect(JSON.parse(readable.edges.toString())).toEqual(JSON.parse(JSON.stringify([knows])));
    const personsOnly = { nodes: Buffer.from(JSON.stringify([alice, bob])), edges: Buffer.from(JSON.stringify([knows])), truncated: false };
    const same = readableAnswer(access, personsOnly);
    expect(same).toEqual({ nodes: personsOnly.nodes, edges: personsOnly.edges, truncatedByAccess: false });
    expect(same.nodes).toBe(personsOnly.nodes);
  });

  it('leaves everything out for a group without any right', () => {
    const nothing = accessOf(false, []);
    expect(nothing.readsWholeGraph).toBe(false);
    expect(readableGraph(nothing, everything())).toEqual({ nodes: [], edges: [], truncatedByAccess: true });
    expect(readableGraph(nothing, { nodes: [], edges: [] })).toEqual({ nodes: [], edges: [], truncatedByAccess: false });
  });
});
