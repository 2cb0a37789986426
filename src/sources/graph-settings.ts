/**
 * The `graph` of a data source, as the API takes it and as it is stored: which engine holds the source's graph, and
 * how to reach it. The Bolt password is never stored in clear (graph_password_sealed) and never answered.
 */
import { invalidParameter } from '../errors.js';
import type { GraphVendor } from '../graph/graph-schemas.js';
import { MAX_GRAPH_PASSWORD, MAX_GRAPH_URL, MAX_GRAPH_USER } from './schemas.js';

/** What POST and PATCH take. */
export interface GraphInput {
  vendor: GraphVendor;
  url?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  database?: string | undefined;
  allowWrites?: boolean | undefined;
}

/** The settings stored for each engine (StoredGraph indexes it by GraphVendor: a vendor added must say here what it keeps). */
interface VendorSettings {
  embedded: { allowWrites: boolean };
  neo4j: { url: string; user: string; database?: string; allowWrites: boolean };
}

/** What is stored in data_sources.graph (the password beside it, sealed): one vendor's settings, tagged with it. */
export type StoredGraph = { [V in GraphVendor]: { vendor: V } & VendorSettings[V] }[GraphVendor];

/** What the API answers: the stored settings, and whether a password is set (never the password). */
export type GraphAnswer = StoredGraph & { passwordSet?: boolean };

const BOLT_SCHEMES = ['bolt:', 'bolt+s:', 'bolt+ssc:', 'neo4j:', 'neo4j+s:', 'neo4j+ssc:'];
// Neo4j's rule for database names, which also keeps anything odd out of the driver's routing.
const DATABASE_NAME = /^[A-Za-z][A-Za-z0-9.-]{0,62}$/;

/**
 * Checks a `graph` and gives what to store. A Neo4j password may be left out when `previous` already has one for
 * the same server and user (a PATCH changing only `allowWrites` or `database`): the stored one is kept.
 */
export function checkGraphInput(input: GraphInput, previous: { graph: StoredGraph | null; passwordSet: boolean }): { graph: StoredGraph; password?: string } {
  if (input.vendor === 'embedded') {
    for (const field of ['url', 'user', 'password', 'database'] as const) {
      if (input[field] !== undefined) throw invalidParameter(`graph.${field} is only for vendor "neo4j": an embedded graph needs no connection settings`);
    }
    return { graph: { vendor: 'embedded', allowWrites: input.allowWrites ?? true } };
  }
  const url = checkBoltUrl(input.url);
  const user = input.user ?? '';
  if (!user || user.length > MAX_GRAPH_USER) throw invalidParameter(`graph.user must be 1 to ${MAX_GRAPH_USER} characters`);
  if (input.database !== undefined && !DATABASE_NAME.test(input.database)) {
    throw invalidParameter(`graph.database must be a database name: a letter, then letters, digits, "." or "-" (at most 63 characters)`);
  }
  const graph: StoredGraph = { vendor: 'neo4j', url, user, ...(input.database !== undefined ? { database: input.database } : {}), allowWrites: input.allowWrites ?? false };
  if (input.password !== undefined) {
    if (!input.password || input.password.length > MAX_GRAPH_PASSWORD) throw invalidParameter(`graph.password must be 1 to ${MAX_GRAPH_PASSWORD} characters`);
    return { graph, password: input.password };
  }
  const same = previous.graph?.vendor === 'neo4j' && previous.graph.url === url && previous.graph.user === user && previous.passwordSet;
  if (!same) throw invalidParameter('graph.password is required for vendor "neo4j" (it may be left out only to keep the one set for the same url and user)');
  return { graph };
}

function checkBoltUrl(raw: string | undefined): string {
  if (!raw) throw invalidParameter('graph.url is required for vendor "neo4j": bolt://host:7687 or neo4j://host:7687');
  if (raw.length > MAX_GRAPH_URL) throw invalidParameter(`graph.url must be at most ${MAX_GRAPH_URL} characters`);
  // Control characters would reach logs and messages as they are.
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw invalidParameter('graph.url must not contain control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParameter(`graph.url must be an absolute URL (bolt://host:7687 or neo4j://host:7687)`);
  }
  if (!BOLT_SCHEMES.includes(url.protocol)) throw invalidParameter(`graph.url must use one of ${BOLT_SCHEMES.map((s) => s.slice(0, -1)).join(', ')}, got "${url.protocol.slice(0, -1)}"`);
  if (url.username || url.password) throw invalidParameter('graph.url must not carry a user or password: give them as graph.user and graph.password');
  if (!url.hostname) throw invalidParameter('graph.url must name a host');
  if (url.port === '0') throw invalidParameter('graph.url must not use port 0');
  return raw;
}
