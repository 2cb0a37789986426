/**
 * A case's target as the graph has it now (LKE's populated case): each node and edge fetched by id, a page at a
 * time. The case page draws it; when the graph cannot answer, the case still has its ids, and `graphProblem` says why.
 *
 * A target may hold 10,000 items, and fetching 500 of them took 0.9-1.3 s of the graph's engine: six loops on case
 * pages held another user's requests to 2.5 s. So a drawing is:
 * - paged: its items are the target's nodes then its edges, CASE_GRAPH_PAGE of them unless asked for more (at most
 *   MAX_CASE_GRAPH_PAGE), and the answer says where the next page starts;
 * - counted in the caller's query slots (query-slots.ts), as a node's lookup is, and run in its turn on the graph;
 * - cached per case, in this process: a page is fetched again once the case has a new match (its matchCount, read
 *   with the case at every request, differs), or after CACHE_TTL_MS (the graph's items may change without one);
 * - filtered per caller after the cache (graph-filter.ts): the cache holds the graph's items whole, and each caller
 *   gets what their groups may read of them (`truncatedByAccess` says whether something was left out).
 */
import { readableGraph } from '../access/graph-filter.js';
import type { SourceAccess } from '../access/source-access.js';
import type { Principal } from '../auth/principal.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { GraphEdge, GraphNode } from '../graph/graph-schemas.js';
import type { GraphRegistry } from '../sources/graph-registry.js';
import type { QuerySlots } from '../sources/query-slots.js';
import { findAlertCase, toCase, type Case, type CaseRef } from './cases.js';
import type { PopulatedCase } from './schemas.js';

/** The items a drawing's page holds unless the caller asks for another number (the console lists 200 ids too). */
export const CASE_GRAPH_PAGE = 200;
/** The most items one page may ask for. */
export const MAX_CASE_GRAPH_PAGE = 1_000;
/** How long a cached page is answered without asking the graph again, when the case had no new match meanwhile. */
export const CACHE_TTL_MS = 60_000;
/** The cases whose pages this process keeps, the least recently asked for going first past it. */
const MAX_CACHED_CASES = 200;
/** The most the cache holds, measured as the pages' JSON. */
const MAX_CACHED_BYTES = 32 * 1024 * 1024;

export interface CaseGraphPage {
  /** Where the page starts, among the target's nodes then edges. */
  offset: number;
  limit: number;
  /** The target's nodes and edges, all pages together. */
  total: number;
  /** The next page's `graphOffset`; null when this one is the last. */
  nextOffset: number | null;
}

export interface PopulatedPart {
  graph?: { nodes: GraphNode[]; edges: GraphEdge[] };
  graphPage?: CaseGraphPage;
  graphProblem?: { key: string; message: string };
  /** With `graph`: items of the page, or properties, the caller's groups may not read were left out. */
  truncatedByAccess?: boolean;
}

interface CachedPage {
  graph: { nodes: GraphNode[]; edges: GraphEdge[] };
  at: number;
  bytes: number;
}

interface CachedCase {
  matchCount: number;
  pages: Map<string, CachedPage>;
}

/**
 * The case (found in its alert, of the route's source) with a page of its drawing as `access` reads it: LKE's
 * populated case. The drawing takes one of `principal`'s query slots unless the page is cached.
 */
export async function populatedCase(
  drawings: CaseDrawings,
  publicBaseUrl: string,
  principal: Principal,
  access: SourceAccess,
  ref: CaseRef,
  asked: { offset?: number | undefined; limit?: number | undefined },
): Promise<PopulatedCase> {
  const kase = toCase(await findAlertCase(drawings.db, ref), publicBaseUrl);
  return { ...kase, ...(await drawings.page(principal, access, kase, asked)) };
}

export class CaseDrawings {
  /** By source and case; the map's order is the least recently asked for first. */
  readonly #cache = new Map<string, CachedCase>();
  /** Pages being fetched: a second request for one waits for the first's answer rather than fetching it again. */
  readonly #fetching = new Map<string, Promise<PopulatedPart>>();
  #bytes = 0;
  /** Pages fetched from the graph, and answered from the cache (tests). */
  readonly counts = { fetched: 0, cached: 0 };

  constructor(
    readonly db: Database,
    readonly graphs: GraphRegistry,
    readonly slots: QuerySlots,
    readonly ttlMs: number = CACHE_TTL_MS,
  ) {}

  /**
   * A page of the drawing of `kase` as `access` reads it: what the caller's groups may not read left out.
   */
  async page(principal: Principal, access: SourceAccess, kase: Pick<Case, 'id' | 'nodes' | 'edges' | 'matchCount'>, asked: { offset?: number | undefined; limit?: number | undefined }): Promise<PopulatedPart> {
    const part = await this.#page(principal, access.sourceKey, kase, asked);
    if (!part.graph) return part;
    if (access.readsWholeGraph) return { ...part, truncatedByAccess: false };
    let endCategories: Map<string, readonly string[] | undefined>;
    try {
      endCategories = await this.#endCategories(principal, access, part.graph);
    } catch (err) {
      // The cached page alone would show edges whose ends could not be judged: a problem of the graph instead.
      if (err instanceof AppError && err.key === 'too_many_requests') throw err;
      return { graphProblem: problemOf(err) };
    }
    const { nodes, edges, truncatedByAccess } = readableGraph(access, part.graph, (id) => endCategories.get(id));
    return { graph: { nodes, edges }, graphPage: part.graphPage, truncatedByAccess };
  }

  /**
   * The categories of the ends of the page's edges that are not among the page's nodes (a page holds the target's
   * nodes, then its edges: a later page's edges meet their ends on an earlier one), each fetched by id in one of the
   * caller's query slots. Only for a caller who does not read the whole graph, and only for edges of a type they
   * read; not cached: in the usual case (a target of up to a page) every end is among the page's nodes, and nothing
   * is fetched. An end the graph does not have is undefined (its edge is left out).
   */
  async #endCategories(principal: Principal, access: SourceAccess, graph: { nodes: GraphNode[]; edges: GraphEdge[] }): Promise<Map<string, readonly string[] | undefined>> {
    const known = new Set(graph.nodes.map((node) => node.id));
    const missing = new Set<string>();
    for (const edge of graph.edges) {
      if (!access.readsEdgeType(edge.data.type)) continue;
      for (const end of [edge.data.source, edge.data.target]) if (!known.has(end)) missing.add(end);
    }
    const categories = new Map<string, readonly string[] | undefined>();
    if (missing.size === 0) return categories;
    const opened = await this.graphs.open(this.db, access.sourceKey);
    if (!opened) return categories;
    await this.slots.hold(principal, access.sourceKey, async () => {
      const ids = [...missing];
      const nodes = await Promise.all(ids.map((id) => opened.graph.node(id)));
      ids.forEach((id, i) => categories.set(id, nodes[i]?.data.categories));
    });
    return categories;
  }

  /**
   * A page of the drawing of `kase`, whole: from the cache when it still holds it, else fetched within one of
   * `principal`'s query slots (429 `too_many_requests` when all are taken). Nothing for a source without a graph.
   */
  async #page(principal: Principal, sourceKey: string, kase: Pick<Case, 'id' | 'nodes' | 'edges' | 'matchCount'>, asked: { offset?: number | undefined; limit?: number | undefined }): Promise<PopulatedPart> {
    const total = kase.nodes.length + kase.edges.length;
    const offset = Math.min(asked.offset ?? 0, total);
    const limit = Math.min(asked.limit ?? CASE_GRAPH_PAGE, MAX_CASE_GRAPH_PAGE);
    const graphPage: CaseGraphPage = { offset, limit, total, nextOffset: offset + limit < total ? offset + limit : null };
    const caseKey = `${sourceKey}\u0000${kase.id}`;
    const pageKey = `${offset}:${limit}`;
    const cached = this.#cached(caseKey, pageKey, kase.matchCount);
    if (cached) {
      this.counts.cached++;
      return { graph: cached.graph, graphPage };
    }
    const fetchKey = `${caseKey}\u0000${kase.matchCount}\u0000${pageKey}`;
    const fetch = () => this.#fetch(principal, sourceKey, kase, offset, limit);
    let fetching = this.#fetching.get(fetchKey);
    let part: PopulatedPart;
    if (fetching) {
      // Another caller's fetch refused for want of *its* slots is no answer for this one, which asks in its own.
      part = await fetching.catch((err: unknown) => {
        if (err instanceof AppError && err.key === 'too_many_requests') return fetch();
        throw err;
      });
    } else {
      fetching = fetch().finally(() => this.#fetching.delete(fetchKey));
      this.#fetching.set(fetchKey, fetching);
      part = await fetching;
    }
    if (part.graph) this.#keep(caseKey, pageKey, kase.matchCount, part.graph);
    return part.graph ? { graph: part.graph, graphPage } : part;
  }

  async #fetch(principal: Principal, sourceKey: string, kase: Pick<Case, 'nodes' | 'edges'>, offset: number, limit: number): Promise<PopulatedPart> {
    const nodeIds = kase.nodes.slice(offset, offset + limit);
    const edgeStart = Math.max(0, offset - kase.nodes.length);
    const edgeIds = kase.edges.slice(edgeStart, edgeStart + limit - nodeIds.length);
    let opened: Awaited<ReturnType<GraphRegistry['open']>>;
    try {
      opened = await this.graphs.open(this.db, sourceKey);
    } catch (err) {
      return { graphProblem: problemOf(err) };
    }
    if (!opened) return {};
    const { graph } = opened;
    // The lookups hold one of the caller's slots and wait their turn on the graph, as GET …/graph/nodes/:id does:
    // a refusal for want of a slot is the caller's 429, not a problem of the graph.
    return this.slots.hold(principal, sourceKey, async () => {
      try {
        const nodes = (await Promise.all(nodeIds.map((id) => graph.node(id)))).filter((n): n is GraphNode => n !== undefined);
        const edges = (await Promise.all(edgeIds.map((id) => graph.edge(id)))).filter((e): e is GraphEdge => e !== undefined);
        this.counts.fetched++;
        return { graph: { nodes, edges } };
      } catch (err) {
        return { graphProblem: problemOf(err) };
      }
    });
  }

  #cached(caseKey: string, pageKey: string, matchCount: number): CachedPage | undefined {
    const entry = this.#cache.get(caseKey);
    if (!entry) return undefined;
    // A new match since: every page of the case goes.
    if (entry.matchCount !== matchCount) {
      this.#drop(caseKey);
      return undefined;
    }
    const page = entry.pages.get(pageKey);
    if (!page) return undefined;
    if (performance.now() - page.at > this.ttlMs) {
      entry.pages.delete(pageKey);
      this.#bytes -= page.bytes;
      return undefined;
    }
    // Asked for again: the last to go.
    this.#cache.delete(caseKey);
    this.#cache.set(caseKey, entry);
    return page;
  }

  #keep(caseKey: string, pageKey: string, matchCount: number, graph: CachedPage['graph']): void {
    const bytes = JSON.stringify(graph).length;
    if (bytes > MAX_CACHED_BYTES / 4) return;
    let entry = this.#cache.get(caseKey);
    if (entry && entry.matchCount !== matchCount) {
      this.#drop(caseKey);
      entry = undefined;
    }
    if (!entry) entry = { matchCount, pages: new Map() };
    const before = entry.pages.get(pageKey);
    if (before) this.#bytes -= before.bytes;
    entry.pages.set(pageKey, { graph, at: performance.now(), bytes });
    this.#bytes += bytes;
    this.#cache.delete(caseKey);
    this.#cache.set(caseKey, entry);
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= MAX_CACHED_CASES && this.#bytes <= MAX_CACHED_BYTES) break;
      if (oldest !== caseKey) this.#drop(oldest);
    }
  }

  #drop(caseKey: string): void {
    const entry = this.#cache.get(caseKey);
    if (!entry) return;
    for (const page of entry.pages.values()) this.#bytes -= page.bytes;
    this.#cache.delete(caseKey);
  }
}

function problemOf(err: unknown): { key: string; message: string } {
  if (err instanceof AppError) return { key: err.key, message: err.message };
  return { key: 'data_source_unavailable', message: err instanceof Error ? err.message : String(err) };
}
