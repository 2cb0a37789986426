/**
 * What every GraphSource promises, whatever engine holds the graph: one suite, run by graph-source-contract.test.ts
 * against each adapter. The fixture is the same small graph in each engine's dialect (`load`); ids are the
 * adapter's own, so the suite checks what holds of any id: a string, the same in every answer and after a restart,
 * and found again by node()/edge().
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRows, GraphError, subgraphOfRows, type GraphSource, type RunOptions } from '../../src/graph/graph-source.js';
import type { GraphEdge, GraphNode } from '../../src/graph/graph-schemas.js';
import { EdgeValue, NodeValue, PathValue, type GraphRow } from '../../src/graph/items.js';

export interface ContractSubject {
  /** Opens the adapter on the graph (again after close(): the ids must survive). */
  open(): Promise<GraphSource>;
  /** Fills the graph with the fixture (labels AwClient and AwPhone, types AW_TRANSFER and AW_HAS_PHONE). */
  load(graph: GraphSource): Promise<void>;
  /** Removes what the suite made (an external server's database is the user's own). */
  cleanup(graph: GraphSource): Promise<void>;
  /** A query that runs for minutes unless stopped. */
  longQuery: string;
  /**
   * Queries in this engine's dialect that reach past the graph (a file, a URL, a plugin's procedure): each is
   * refused with bad_graph_request, in a read-only run and in a run that may write.
   */
  outsideQueries: readonly string[];
}

const READ: RunOptions = { timeoutMs: 20_000, maxRows: 1000, readOnly: true };
const WRITE: RunOptions = { ...READ, readOnly: false };

/** Runs and reads a query to its end: a write is refused before its rows on some engines, at their end on others. */
async function rows(graph: GraphSource, query: string, options: RunOptions = READ, params?: Record<string, unknown>): Promise<GraphRow[]> {
  return allRows(await graph.run(query, { ...options, ...(params ? { params } : {}) }));
}

async function refusal(work: Promise<unknown>): Promise<GraphError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GraphError);
  return err as GraphError;
}

export function graphSourceContract(name: string, subject: ContractSubject): void {
  describe(`the GraphSource contract: ${name}`, () => {
    let graph: GraphSource;
    const clients = async () => (await rows(graph, 'MATCH (c:AwClient) RETURN c.id AS id ORDER BY id')).map((r) => r.id);

    beforeAll(async () => {
      graph = await subject.open();
      await subject.load(graph);
    }, 120_000);
    afterAll(async () => {
      if (!graph) return;
      await subject.cleanup(graph).catch(() => undefined);
      await graph.close();
    }, 60_000);

    it('answers nodes, edges and paths in LKE shapes, and scalars as scalars', async () => {
      const [row] = await rows(
        graph,
        "MATCH p = (a:AwClient)-[t:AW_TRANSFER]->(c:AwClient) WHERE a.id = $id RETURN a, t, c, p, t.amount AS amount, a.name AS name",
        READ,
        { id: 'alice' },
      );
      expect(row).toBeDefined();
      const { a, t, c, p } = row!;
      expect(row!.amount).toBe(12.5);
      expect(row!.name).toBe('Alice');
      expect(a).toBeInstanceOf(NodeValue);
      const alice = (a as NodeValue).node;
      const carol = (c as NodeValue).node;
      expect(alice).toMatchObject({ data: { categories: ['AwClient'], properties: { id: 'alice', name: 'Alice' }, isVirtual: false } });
      expect(typeof alice.id).toBe('string');
      expect(alice.data.readAt).toBeGreaterThan(0);
      const transfer = (t as EdgeValue).edge;
      expect(transfer).toMatchObject({
        source: alice.id,
        target: carol.id,
        data: { type: 'AW_TRANSFER', source: alice.id, target: carol.id, properties: { id: 't-1', amount: 12.5 } },
      });
      expect(p).toBeInstanceOf(PathValue);
      expect((p as PathValue).path.nodes.map((n) => n.id)).toEqual([alice.id, carol.id]);
      expect((p as PathValue).path.edges.map((e) => e.id)).toEqual([transfer.id]);
    });

    it('maps lists of nodes item by item', async () => {
      const [row] = await rows(graph, 'MATCH (c:AwClient) RETURN collect(c) AS clients');
      const clients = row!.clients as NodeValue[];
      expect(clients.map((n) => n.node.data.properties.id).sort()).toEqual(['alice', 'bob', 'carol']);
    });

    it('answers a query\'s distinct nodes and edges as its rows hold them, rows added whole up to the item cap', async () => {
      const query = 'MATCH p = (a:AwClient)-[h:AW_HAS_PHONE]->(ph:AwPhone)<-[:AW_HAS_PHONE]-(b:AwClient) RETURN a, h, ph, b, p, [a, b] AS pair';
      const expected = await subgraphOfRows(await graph.run(query, READ), 1000);
      const answer = await graph.subgraph(query, { ...READ, maxItems: 1000 });
      const parsed = { nodes: JSON.parse(answer.nodes.toString()) as GraphNode[], edges: JSON.parse(answer.edges.toString()) as GraphEdge[] };
      const sorted = <T extends { id: string }>(items: T[]) => [...items].sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(sorted(parsed.nodes).map((n) => ({ ...n, data: { ...n.data, readAt: 0 } }))).toEqual(
        sorted(JSON.parse(expected.nodes.toString()) as GraphNode[]).map((n) => ({ ...n, data: { ...n.data, readAt: 0 } })),
      );
      expect(sorted(parsed.edges).map((e) => ({ ...e, data: { ...e.data, readAt: 0 } }))).toEqual(
        sorted(JSON.parse(expected.edges.toString()) as GraphEdge[]).map((e) => ({ ...e, data: { ...e.data, readAt: 0 } })),
      );
      // alice and bob share the phone: 3 nodes, 2 edges, each once whatever the rows repeat.
      expect([parsed.nodes.length, parsed.edges.length, answer.truncated]).toEqual([3, 2, false]);
      expect(parsed.nodes.find((n) => n.data.categories[0] === 'AwPhone')).toMatchObject({ data: { properties: { number: 5550100 } } });
      // A row is added whole, and then the answer is cut.
      const cut = await graph.subgraph('MATCH (c:AwClient) RETURN c ORDER BY c.id', { ...READ, maxItems: 2 });
      expect([(JSON.parse(cut.nodes.toString()) as GraphNode[]).map((n) => n.data.properties.id), cut.truncated]).toEqual([['alice', 'bob'], true]);
      const capped = await graph.subgraph('MATCH (c:AwClient) RETURN c ORDER BY c.id', { ...READ, maxRows: 1, maxItems: 10 });
      expect([(JSON.parse(capped.nodes.toString()) as GraphNode[]).length, capped.truncated]).toEqual([1, true]);
      expect((await refusal(graph.subgraph("CREATE (:AwClient {id: 'mallory'})", { ...READ, maxItems: 10 }))).key).toBe('write_forbidden');
    });

    it('gives each item the same id in every answer and after the graph is opened again, and finds it by that id', async () => {
      const query = "MATCH (a:AwClient)-[h:AW_HAS_PHONE]->(p:AwPhone) WHERE a.id = 'bob' RETURN a, h, p";
      const ids = (row: GraphRow) => [(row.a as NodeValue).node.id, (row.h as EdgeValue).edge.id, (row.p as NodeValue).node.id];
      const first = ids((await rows(graph, query))[0]!);
      expect(ids((await rows(graph, query))[0]!)).toEqual(first);
      await graph.close();
      graph = await subject.open();
      expect(ids((await rows(graph, query))[0]!)).toEqual(first);
      const [bob, hasPhone, phone] = first as [string, string, string];
      expect(await graph.node(bob)).toMatchObject({ id: bob, data: { categories: ['AwClient'], properties: { id: 'bob' } } });
      expect(await graph.node(phone)).toMatchObject({ id: phone, data: { categories: ['AwPhone'] } });
      expect(await graph.edge(hasPhone)).toMatchObject({ id: hasPhone, source: bob, target: phone, data: { type: 'AW_HAS_PHONE', properties: { since: 2020 } } });
      expect(await graph.node('no-such-node')).toBeUndefined();
      expect(await graph.edge('no-such-edge')).toBeUndefined();
    }, 60_000);

    it('refuses writes in a read-only run with write_forbidden, and the graph stays as it was', async () => {
      for (const query of ["CREATE (:AwClient {id: 'mallory', name: 'Mallory'})", "MATCH (c:AwClient) SET c.name = 'pwned' RETURN c", 'MATCH (c:AwClient) DETACH DELETE c']) {
        expect((await refusal(rows(graph, query))).key, query).toBe('write_forbidden');
      }
      expect(await clients()).toEqual(['alice', 'bob', 'carol']);
      expect((await rows(graph, "MATCH (c:AwClient) WHERE c.name = 'pwned' RETURN c")).length).toBe(0);
    });

    it('commits a run that may write', async () => {
      await rows(graph, "CREATE (:AwClient {id: 'dave', name: 'Dave'})", WRITE);
      expect(await clients()).toEqual(['alice', 'bob', 'carol', 'dave']);
      await rows(graph, "MATCH (c:AwClient) WHERE c.id = 'dave' DELETE c", WRITE);
      expect(await clients()).toEqual(['alice', 'bob', 'carol']);
    });

    it('stops reading at the row cap and says the answer was cut', async () => {
      const cut = await graph.run('UNWIND range(1, 100) AS i RETURN i', { ...READ, maxRows: 10 });
      expect((await allRows(cut)).map((r) => r.i)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(cut.truncated).toBe(true);
      const whole = await graph.run('UNWIND range(1, 100) AS i RETURN i', { ...READ, maxRows: 100 });
      expect(await allRows(whole)).toHaveLength(100);
      expect(whole.truncated).toBe(false);
    });

    it('stops a query past its time-out with graph_request_timeout, and answers the next one', async () => {
      const err = await refusal(rows(graph, subject.longQuery, { ...READ, timeoutMs: 300 }));
      expect(err.key).toBe('graph_request_timeout');
      expect(err.message).toMatch(/ran past its time-out/);
      expect((await rows(graph, 'RETURN 1 AS one'))[0]!.one).toBe(1);
    }, 60_000);

    it('refuses what reaches past the graph, however it is written, and runs a plain read', async () => {
      for (const query of subject.outsideQueries) {
        for (const options of [READ, WRITE]) {
          const err = await refusal(rows(graph, query, options));
          expect(err.key, JSON.stringify(query)).toBe('bad_graph_request');
          expect(err.message.length).toBeGreaterThan(0);
        }
      }
      expect(await rows(graph, 'MATCH (c:AwClient) RETURN count(c) AS n')).toEqual([{ n: 3 }]);
      expect(await clients()).toEqual(['alice', 'bob', 'carol']);
    });

    it('answers a syntax error with bad_graph_request and the engine\'s message', async () => {
      const err = await refusal(rows(graph, 'MATCH (n:AwClient RETURN n'));
      expect(err.key).toBe('bad_graph_request');
      expect(err.message.length).toBeGreaterThan(0);
    });
  });
}
