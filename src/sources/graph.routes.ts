import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { requireAction, sourceAccessOf } from '../access/access-hook.js';
import { readableAnswer, readableGraph } from '../access/graph-filter.js';
import type { SourceAccess } from '../access/source-access.js';
import { requireUser } from '../auth/authenticate.js';
import { isAdmin, type Principal } from '../auth/principal.js';
import type { Database } from '../db/database.js';
import { notFound } from '../errors.js';
import { GraphError, queryRefused, type GraphSource, type SubgraphAnswer } from '../graph/graph-source.js';
import { GraphEdgeSchema, GraphNodeSchema, type GraphEdge, type GraphNode } from '../graph/graph-schemas.js';
import { errorResponses } from '../http/schemas.js';
import type { Metrics } from '../metrics/metrics.js';
import type { GraphRegistry, OpenedGraph } from './graph-registry.js';
import { INTERACTIVE_THREADS } from './graph-share.js';
import type { QuerySlots } from './query-slots.js';
import { DEFAULT_QUERY_LIMIT, DEFAULT_QUERY_TIMEOUT_MS, RunQueryAnswer, RunQueryBody, SourceKey } from './schemas.js';

export interface GraphRoutesOptions {
  db: Database;
  graphs: GraphRegistry;
  metrics?: Metrics | undefined;
  /** The interactive queries each user has running, shared with alertPreview. */
  slots: QuerySlots;
}

// Item ids come from the graph engines (Neo4j's elementId, or <label>:<key>); long ones are refused as a path
// parameter by the router first.
const ItemParams = Type.Object({ sourceKey: SourceKey, id: Type.String({ minLength: 1, maxLength: 1024 }) });
// An answer's nodes and edges together, at most: a query that returns more is cut (truncatedByLimit).
export const MAX_ANSWER_ITEMS = 20_000;
const NODES_HEAD = Buffer.from('{"nodes":');
const EDGES_HEAD = Buffer.from(',"edges":');
const LOOKUP_ACCESS =
  "A node or an edge the caller's groups may not read (its category or type, or, for an edge, one of its ends) answers 404 " +
  'as one the graph does not have; the properties they may not read are left out.';

export const graphRoutes: FastifyPluginAsyncTypebox<GraphRoutesOptions> = async (app, { db, graphs, metrics, slots }) => {
  app.post(
    '/api/:sourceKey/graph/run/query',
    {
      schema: {
        operationId: 'runQuery',
        tags: ['graph'],
        summary: 'Run a Cypher query on the graph of a data source: the nodes and edges it returns',
        description:
          'Read queries for a user whose groups give the `rawReadQuery` right on the source (403 forbidden otherwise); a write ' +
          '(CREATE, MERGE, SET, DELETE, COPY, DDL…) only for Admins, on a graph whose settings allow writes (403 forbidden otherwise). ' +
          '`limit` bounds the rows read. What the caller\'s groups may not read is left out (`truncatedByAccess`).',
        params: Type.Object({ sourceKey: SourceKey }),
        body: RunQueryBody,
        response: { 200: RunQueryAnswer, ...errorResponses(400, 401, 403, 429, 503, 504) },
      },
    },
    async (request, reply) => {
      const principal = requireUser(request);
      // Refused before a slot is taken or the engine asked.
      const access = requireAction(request, 'rawReadQuery', 'a graph query');
      const answer = await slots.hold(principal, request.params.sourceKey, () => runQuery(principal, request.params.sourceKey, request.body));
      // The nodes and edges come as UTF-8 JSON in the answer's shapes (GraphSource.subgraph): sent as they are, not
      // parsed here to be written again (Fastify sends bytes as they are; the schema still documents the answer),
      // unless the caller's groups may not read all of them (graph-filter.ts).
      const readable = readableAnswer(access, answer);
      const tail = `,"truncatedByLimit":${answer.truncated},"truncatedByAccess":${readable.truncatedByAccess}}`;
      const body = Buffer.concat([NODES_HEAD, readable.nodes, EDGES_HEAD, readable.edges, Buffer.from(tail)]);
      return reply.type('application/json; charset=utf-8').send(body as unknown as Static<typeof RunQueryAnswer>);
    },
  );

  async function runQuery(principal: Principal, sourceKey: string, body: Static<typeof RunQueryBody>) {
    const limit = body.limit ?? DEFAULT_QUERY_LIMIT;
    const timeoutMs = body.timeout ?? DEFAULT_QUERY_TIMEOUT_MS;
    // One worker thread: the graph's threads are shared out per query (graph-share.ts).
    const options = { timeoutMs, maxRows: limit, threads: INTERACTIVE_THREADS };
    const started = performance.now();
    const observe = (outcome: string) => metrics?.graphQuery(sourceKey, outcome, (performance.now() - started) / 1000);
    // Every query is first run read-only, where the engine itself refuses any write (before the run, or at its end
    // on Memgraph, where the run is then rolled back); only an Admin's query on a graph that allows writes is then
    // run again as a write.
    const runOn = (graph: GraphSource, readOnly: boolean) => graph.subgraph(body.query, { ...options, readOnly, maxItems: MAX_ANSWER_ITEMS });
    // The source's row is read at every query (its graph may have changed or gone, through any process). Meanwhile
    // the graph this process holds starts the read-only run: its answer counts only if the row still names that
    // graph (a changed or removed graph is closed by the read, which stops the run), so the read costs no wait.
    const held = graphs.held(sourceKey)?.graph;
    const early = held && runOn(held, true);
    early?.catch(() => undefined);
    let opened: OpenedGraph;
    try {
      opened = await graphs.require(db, sourceKey);
    } catch (err) {
      await early?.catch(() => undefined);
      throw err;
    }
    const { graph, settings } = opened;
    try {
      let answer: SubgraphAnswer;
      try {
        answer = await (early && held === graph ? early : runOn(graph, true));
      } catch (err) {
        if (!(err instanceof GraphError) || err.key !== 'write_forbidden') throw err;
        if (!isAdmin(principal)) throw new GraphError('write_forbidden', 'this query writes to the graph: only Admins may run write queries');
        if (!settings.allowWrites) throw new GraphError('write_forbidden', `this query writes to the graph, and the graph of data source "${sourceKey}" does not allow writes (graph.allowWrites)`);
        answer = await runOn(graph, false);
      }
      observe('ok');
      return answer;
    } catch (err) {
      observe(err instanceof GraphError ? err.key : 'error');
      throw queryRefused(err, 'query');
    }
  }

  // A lookup may scan a table (an id that is no key): it holds one of the caller's query slots, as a query does.
  const lookUp = <T>(principal: Principal, sourceKey: string, find: (graph: GraphSource) => Promise<T>) =>
    slots.hold(principal, sourceKey, async () => find((await graphs.require(db, sourceKey)).graph));
  // A node or an edge the caller may not read answers as one the graph does not have: the same 404, word for word.
  const nodeOf = async (graph: GraphSource, id: string, access: SourceAccess) => {
    const node = await graph.node(id);
    const readable = node && readableGraph(access, { nodes: [node], edges: [] }).nodes[0];
    if (!readable) throw notFound('node', id);
    return readable;
  };
  /**
   * The edge and its ends (each once; an end the graph no longer has is left out). A caller who reads the whole graph
   * gets the ends only when `withEnds` (the edge's subgraph); for another they are always fetched, one lookup after
   * the other (the caller's slot is one query at a time), to judge the edge by them: it is read only beside two
   * readable ends.
   */
  const edgeOf = async (graph: GraphSource, id: string, access: SourceAccess, withEnds: boolean): Promise<{ edge: GraphEdge; ends: GraphNode[] }> => {
    const edge = await graph.edge(id);
    // An edge of a type the caller may not read: its ends are not even looked up.
    if (!edge || (!access.readsWholeGraph && !access.readsEdgeType(edge.data.type))) throw notFound('edge', id);
    const ends: GraphNode[] = [];
    if (withEnds || !access.readsWholeGraph) {
      for (const endId of new Set([edge.data.source, edge.data.target])) {
        const node = await graph.node(endId);
        if (node) ends.push(node);
      }
    }
    const readable = readableGraph(access, { nodes: ends, edges: [edge] });
    if (!readable.edges[0]) throw notFound('edge', id);
    return { edge: readable.edges[0], ends: readable.nodes };
  };

  app.get(
    '/api/:sourceKey/graph/nodes/:id',
    { schema: { operationId: 'getNode', tags: ['graph'], summary: 'One node of the graph', description: LOOKUP_ACCESS, params: ItemParams, response: { 200: GraphNodeSchema, ...errorResponses(400, 401, 404, 429, 503) } } },
    async (request) => lookUp(requireUser(request), request.params.sourceKey, (graph) => nodeOf(graph, request.params.id, sourceAccessOf(request))),
  );

  app.get(
    '/api/:sourceKey/graph/edges/:id',
    { schema: { operationId: 'getEdge', tags: ['graph'], summary: 'One edge of the graph', description: LOOKUP_ACCESS, params: ItemParams, response: { 200: GraphEdgeSchema, ...errorResponses(400, 401, 404, 429, 503) } } },
    async (request) => lookUp(requireUser(request), request.params.sourceKey, async (graph) => (await edgeOf(graph, request.params.id, sourceAccessOf(request), false)).edge),
  );

  // What @linkurious/rest-client's graphNode.getNode and graphEdge.getEdge send: a POST, whose body may carry LKE's
  // edgesTo, withDigest and withDegree (taken and left unused: items here have no digest or degree), answered as LKE
  // answers it, a subgraph: the node alone; the edge with its two ends (an end the graph no longer has is left out).
  const LookupBody = Type.Optional(
    Type.Object({
      edgesTo: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 1000 })),
      withDigest: Type.Optional(Type.Boolean()),
      withDegree: Type.Optional(Type.Boolean()),
    }),
  );
  const LookupAnswer = Type.Object({ nodes: Type.Array(GraphNodeSchema), edges: Type.Array(GraphEdgeSchema) });

  app.post(
    '/api/:sourceKey/graph/nodes/:id',
    {
      schema: {
        operationId: 'getNodeSubgraph',
        tags: ['graph'],
        summary: "One node of the graph, as LKE's getNode asks for it: a subgraph of that node alone",
        description: LOOKUP_ACCESS,
        params: ItemParams,
        body: LookupBody,
        response: { 200: LookupAnswer, ...errorResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request) => lookUp(requireUser(request), request.params.sourceKey, async (graph) => ({ nodes: [await nodeOf(graph, request.params.id, sourceAccessOf(request))], edges: [] })),
  );

  app.post(
    '/api/:sourceKey/graph/edges/:id',
    {
      schema: {
        operationId: 'getEdgeSubgraph',
        tags: ['graph'],
        summary: "One edge of the graph, as LKE's getEdge asks for it: a subgraph of the edge and its two ends",
        description: LOOKUP_ACCESS,
        params: ItemParams,
        body: LookupBody,
        response: { 200: LookupAnswer, ...errorResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request) =>
      lookUp(requireUser(request), request.params.sourceKey, async (graph) => {
        const { edge, ends } = await edgeOf(graph, request.params.id, sourceAccessOf(request), true);
        return { nodes: ends, edges: [edge] };
      }),
  );
};
