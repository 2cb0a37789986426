/**
 * The access bench: `npm run bench:access [-- --quick] [--out FILE]`. What the access rights of issue 40 add to the
 * graph bench's 2-hop `run/query` (bench/graph.ts: the same generated transfer graph, the same query): the same query
 * through the compiled service, alternately as a built-in Analyst (who reads the whole graph: the answer's bytes go
 * out as the Kùzu process made them) and as a member of a custom group with a category hidden and property-key rights
 * on (the answer parsed, filtered and written again, src/access/graph-filter.ts), each in its own session. Reports the
 * medians of each and their ratio, the service's CPU per query for each, and the filter alone, in this process, on
 * the same answer. Figures go to bench/results/access-latest.json; bench/README.md ("Access rights") reads them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { readableAnswer } from '../src/access/graph-filter.js';
import { accessFromRights } from '../src/access/source-access.js';
import { createDatabase } from '../src/db/database.js';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { processCpuSeconds } from './lib/cpu.js';
import { generateGraph } from './lib/graph-csv.js';
import { graphLoad } from './lib/graph-load.js';
import { exactMedian as median, phase, round } from './lib/progress.js';
import { ServiceProcess } from './lib/service.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outIndex = args.indexOf('--out');
const outFile = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1]! : path.join(ROOT, 'bench/results/access-latest.json'));
const PLAN = quick ? { accounts: 2_000, edges: 20_000, rounds: 3, queriesPerRound: 5, filterRuns: 20 } : { accounts: 200_000, edges: 1_000_000, rounds: 5, queriesPerRound: 20, filterRuns: 100 };
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'bench';
const GRAPH_MEMORY_MB = process.env.GRAPH_MEMORY_MB ?? '256';
// bench/graph.ts's query with its default 20 start accounts.
const QUERY = 'MATCH (a:Account)-[t1:TRANSFER]->(b:Account)-[t2:TRANSFER]->(c:Account) WHERE a.id < 20 RETURN a, t1, b, t2, c';
const LIMIT = 10_000;

/**
 * The custom group's rights: every category but Branch (a category the graph may hold, hidden: the whole graph is no
 * longer readable, so the fast path is off), every edge type, and with property-key rights on, Account's id and
 * TRANSFER's amount only: every node and edge of the answer loses a property, so every item is copied (the filter's
 * costliest case but for dropping items, which makes the answer smaller).
 */
const RIGHTS: [targetType: string, targetName: string, type: string, targetItemType?: string][] = [
  ['nodeCategory', '*', 'read'],
  ['nodeCategory', 'Branch', 'none'],
  ['edgeType', '*', 'read'],
  ['nodePropertyKey', 'id', 'read', 'Account'],
  ['edgePropertyKey', 'amount', 'read', 'TRANSFER'],
  ['action', 'rawReadQuery', 'do'],
];

interface Answer {
  nodes: { data: { properties: Record<string, unknown> } }[];
  edges: { data: { properties: Record<string, unknown> } }[];
  truncatedByLimit: boolean;
  truncatedByAccess: boolean;
}

/** A user signed in over HTTP (undici, keep-alive), asking run/query. */
class UserSession {
  readonly #pool: Pool;
  #cookie = '';
  constructor(baseUrl: string) {
    this.#pool = new Pool(baseUrl, { connections: 4 });
  }
  async signIn(username: string, password: string): Promise<void> {
    const response = await this.#pool.request({ method: 'POST', path: '/api/auth/login', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usernameOrEmail: username, password }) });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`sign-in of ${username} failed: ${response.statusCode}`);
    this.#cookie = /aw\.sid=[^;]+/.exec(String(response.headers['set-cookie']))![0];
  }
  async query(): Promise<Answer> {
    const response = await this.#pool.request({
      method: 'POST',
      path: `/api/${SOURCE}/graph/run/query`,
      headers: { cookie: this.#cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY, dialect: 'cypher', limit: LIMIT }),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`run/query answered ${response.statusCode}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Answer;
  }
  close(): Promise<void> {
    return this.#pool.close();
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-access-bench-'));
const dataDir = path.join(dir, 'data');
mkdirSync(dataDir);
const env = { DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000', GRAPH_MEMORY_MB };
phase('building the service');
const build = await buildService();
let service: ServiceProcess | undefined;
const sessions: UserSession[] = [];
try {
  phase(`generating ${PLAN.edges.toLocaleString('en')} edges between ${PLAN.accounts.toLocaleString('en')} accounts`);
  const graph = await generateGraph(dir, PLAN.accounts, PLAN.edges);

  phase('creating the data source and the two users');
  service = await ServiceProcess.start(build.cli, env);
  const admin = new AdminClient(service.baseUrl);
  await admin.signIn(ADMIN_PASSWORD);
  await admin.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Bench', graph: { vendor: 'embedded' } });
  const users: Record<string, number> = {};
  for (const username of ['analyst', 'restricted']) {
    users[username] = (await admin.call<{ id: number }>('POST', '/api/admin/users', { username, email: `${username}@example.com`, password: `${username}-password`, groups: [2] })).id;
  }
  await admin.close();
  await service.stop();

  phase('loading the CSV files with `graph load`');
  await graphLoad(build.cli, env, SOURCE, { accounts: graph.accountsFile, transfers: graph.transfersFile });

  // With the service stopped (the embedded database admits one process), as an Admin's PUT of the rights would leave them.
  phase('giving the restricted user a custom group');
  const db = await createDatabase({ dataDir });
  try {
    await db.query('UPDATE data_sources SET property_key_access_rights = true WHERE key = $1', [SOURCE]);
    const { rows } = await db.query<{ id: number }>('INSERT INTO groups (name, builtin, source_key) VALUES ($1, false, $2) RETURNING id', ['Restricted', SOURCE]);
    for (const [targetType, targetName, type, itemType] of RIGHTS) {
      await db.query('INSERT INTO group_access_rights (group_id, target_type, target_item_type, target_name, type) VALUES ($1, $2, $3, $4, $5)', [rows[0]!.id, targetType, itemType ?? '', targetName, type]);
    }
    await db.query('DELETE FROM user_groups WHERE user_id = $1', [users.restricted]);
    await db.query('INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2)', [users.restricted, rows[0]!.id]);
  } finally {
    await db.close();
  }

  phase('the 2-hop query as the Analyst and as the restricted user, alternately');
  service = await ServiceProcess.start(build.cli, env);
  const analyst = new UserSession(service.baseUrl);
  const restricted = new UserSession(service.baseUrl);
  sessions.push(analyst, restricted);
  await analyst.signIn('analyst', 'analyst-password');
  await restricted.signIn('restricted', 'restricted-password');
  const whole = await analyst.query();
  const filtered = await restricted.query();
  if (whole.truncatedByLimit || whole.edges.length === 0 || whole.truncatedByAccess) throw new Error('the Analyst got a cut, empty or filtered answer');
  if (!filtered.truncatedByAccess || filtered.nodes.length !== whole.nodes.length || filtered.edges.length !== whole.edges.length) throw new Error('the restricted user did not get the same items, filtered');
  if (filtered.edges.some((edge) => 'day' in edge.data.properties) || filtered.nodes.some((node) => 'name' in node.data.properties)) throw new Error('a hidden property was answered');
  const answerBytes = { whole: Buffer.byteLength(JSON.stringify(whole)), filtered: Buffer.byteLength(JSON.stringify(filtered)) };
  for (let i = 0; i < 3; i++) {
    await analyst.query();
    await restricted.query();
  }

  const ms = { analyst: [] as number[], restricted: [] as number[] };
  const cpu = { analyst: 0, restricted: 0 };
  const pid = service.child.pid!;
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  for (let r = 0; r < PLAN.rounds; r++) {
    // Each round in the other order: a machine that speeds up or slows down weighs on both alike.
    const order = r % 2 === 0 ? (['analyst', 'restricted'] as const) : (['restricted', 'analyst'] as const);
    for (const who of order) {
      const session = who === 'analyst' ? analyst : restricted;
      const before = processCpuSeconds(pid);
      for (let q = 0; q < PLAN.queriesPerRound; q++) ms[who].push(await timed(() => session.query()));
      cpu[who] += processCpuSeconds(pid) - before;
    }
  }
  const queries = PLAN.rounds * PLAN.queriesPerRound;
  const cpuMsPerQuery = { analyst: round((cpu.analyst * 1000) / queries, 2), restricted: round((cpu.restricted * 1000) / queries, 2) };
  const servicePeakRssMb = service.peakRssMb();

  // The filter alone, in this process, on the Analyst's answer as the Kùzu process hands it over (its JSON bytes).
  const access = accessFromRights(
    SOURCE,
    true,
    RIGHTS.map(([targetType, targetName, type, itemType]) => ({ property_key_access_rights: true, group_id: 3, target_type: targetType as never, target_item_type: itemType ?? '', target_name: targetName, type })),
  );
  const bytes = { nodes: Buffer.from(JSON.stringify(whole.nodes)), edges: Buffer.from(JSON.stringify(whole.edges)), truncated: false };
  const filterMs: number[] = [];
  for (let i = 0; i < PLAN.filterRuns + 10; i++) {
    const started = performance.now();
    readableAnswer(access, bytes);
    if (i >= 10) filterMs.push(performance.now() - started);
  }

  const figures = {
    mode: quick ? 'quick' : 'default',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / 2 ** 20), node: process.version },
    settings: { ...PLAN, graphMemoryMb: Number(GRAPH_MEMORY_MB), query: QUERY, rights: RIGHTS },
    answer: { nodes: whole.nodes.length, edges: whole.edges.length, bytes: answerBytes },
    query: {
      analystMedianMs: round(median(ms.analyst), 2),
      restrictedMedianMs: round(median(ms.restricted), 2),
      ratio: round(median(ms.restricted) / median(ms.analyst), 2),
      addedMs: round(median(ms.restricted) - median(ms.analyst), 2),
      serviceCpuMsPerQuery: cpuMsPerQuery,
      serviceCpuAddedMs: round(cpuMsPerQuery.restricted - cpuMsPerQuery.analyst, 2),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)),
    },
    filterAlone: { medianMs: round(median(filterMs), 2), runs: filterMs.length },
    memory: { servicePeakRssMb },
  };
  writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`
Alert Webhooks access bench (${figures.mode}), GRAPH_MEMORY_MB=${GRAPH_MEMORY_MB}
2-hop query (${whole.nodes.length} nodes + ${whole.edges.length} edges; ${answerBytes.whole} bytes whole, ${answerBytes.filtered} filtered):
  Analyst ${figures.query.analystMedianMs} ms, custom group (category hidden, property-key rights on) ${figures.query.restrictedMedianMs} ms (medians of ${queries}): ×${figures.query.ratio}, +${figures.query.addedMs} ms (load ${loadAtStart.join(' ')})
  service CPU per query: Analyst ${cpuMsPerQuery.analyst} ms, custom group ${cpuMsPerQuery.restricted} ms: +${figures.query.serviceCpuAddedMs} ms
  the filter alone (parse, filter, write the JSON again), in this process: ${figures.filterAlone.medianMs} ms (median of ${filterMs.length})
figures written to ${path.relative(process.cwd(), outFile)}`);
} finally {
  for (const session of sessions) await session.close().catch(() => undefined);
  await service?.stop().catch(() => undefined);
  build.dispose();
  rmSync(dir, { recursive: true, force: true });
}
