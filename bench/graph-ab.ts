/**
 * The graph bench's 2-hop query side by side: `npx tsx bench/graph-ab.ts [--baseline REF] [--quick] [--rounds N]`.
 * Two services (the revision REF, main by default, and this checkout) each on a copy of the same loaded graph, and
 * Kùzu called directly on a third (the ceiling), queried in turn (the order rotating each round) so the same load
 * falls on all three. Prints each one's median and its CPU per query (service and its Kùzu process). bench/graph.ts
 * says what the query and the ceiling are; bench/README.md ("Graph") has the figures.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from './lib/api.js';
import { buildService, buildServiceAt } from './lib/build.js';
import { processCpuSeconds } from './lib/cpu.js';
import { generateGraph } from './lib/graph-csv.js';
import { graphLoad, kuzuChildPid } from './lib/graph-load.js';
import { KuzuCeiling } from './lib/kuzu-ceiling.js';
import { exactMedian as median, phase, round } from './lib/progress.js';
import { ServiceProcess } from './lib/service.js';

const args = process.argv.slice(2);
const option = (name: string) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
const quick = args.includes('--quick');
const BASELINE = option('--baseline') ?? 'main';
const ROUNDS = Number(option('--rounds') ?? (quick ? 3 : 8));
const PER_ROUND = 10;
const PLAN = quick ? { accounts: 2_000, edges: 20_000 } : { accounts: 200_000, edges: 1_000_000 };
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'bench';
const GRAPH_MEMORY_MB = '256';
const QUERY = 'MATCH (a:Account)-[t1:TRANSFER]->(b:Account)-[t2:TRANSFER]->(c:Account) WHERE a.id < 20 RETURN a, t1, b, t2, c';

const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-graph-ab-'));
const envOf = (dataDir: string) => ({ DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000', GRAPH_MEMORY_MB });
phase(`building the service at ${BASELINE} and this checkout`);
const builds = { baseline: await buildServiceAt(BASELINE), current: await buildService() };
const services: ServiceProcess[] = [];
try {
  const graph = await generateGraph(dir, PLAN.accounts, PLAN.edges);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  phase('creating and loading the graph');
  const setup = await ServiceProcess.start(builds.current.cli, envOf(dataDir));
  const admin = new AdminClient(setup.baseUrl);
  await admin.signIn(ADMIN_PASSWORD);
  await admin.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Bench', graph: { vendor: 'embedded' } });
  await admin.close();
  await setup.stop();
  await graphLoad(builds.current.cli, envOf(dataDir), SOURCE, { accounts: graph.accountsFile, transfers: graph.transfersFile });
  const baselineDir = path.join(dir, 'data-baseline');
  cpSync(dataDir, baselineDir, { recursive: true });
  const ceiling = KuzuCeiling.open(dataDir, SOURCE, dir, Number(GRAPH_MEMORY_MB));
  const profile = process.env.AB_PROFILE_DIR;
  const contestants = [];
  for (const [name, cli, data] of [['baseline', builds.baseline.cli, baselineDir], ['current', builds.current.cli, dataDir]] as const) {
    // AB_PROFILE_DIR: a CPU profile of this checkout's service, written as it stops.
    const service = await ServiceProcess.start(cli, envOf(data), name === 'current' ? profile : undefined);
    services.push(service);
    const api = new AdminClient(service.baseUrl);
    await api.signIn(ADMIN_PASSWORD);
    const query = async () => {
      const answer = await api.call<{ nodes: unknown[]; edges: unknown[] }>('POST', `/api/${SOURCE}/graph/run/query`, { query: QUERY, dialect: 'cypher', limit: 10_000 });
      if (answer.edges.length === 0) throw new Error(`${name} answered nothing`);
    };
    await query();
    contestants.push({ name, query, api, pids: () => [service.child.pid!, kuzuChildPid(service.child.pid!)] });
  }
  const direct = {
    name: 'direct',
    query: async () => {
      await ceiling.readAll(QUERY);
    },
    pids: () => [process.pid],
  };
  const all = [direct, ...contestants];
  for (let i = 0; i < 3; i++) for (const c of all) await c.query();
  const wall = new Map(all.map((c) => [c.name, [] as number[]]));
  const cpu = new Map(all.map((c) => [c.name, [0, 0]]));
  phase(`${ROUNDS} rounds of ${PER_ROUND} queries each, the order rotating (load ${os.loadavg().map((l) => round(l, 1)).join(' ')})`);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < all.length; k++) {
      const c = all[(r + k) % all.length]!;
      const pids = c.pids();
      const before = pids.map(processCpuSeconds);
      for (let q = 0; q < PER_ROUND; q++) {
        const started = performance.now();
        await c.query();
        wall.get(c.name)!.push(performance.now() - started);
      }
      const spent = cpu.get(c.name)!;
      pids.forEach((pid, i) => (spent[i]! += processCpuSeconds(pid) - before[i]!));
    }
  }
  const directMedian = median(wall.get('direct')!);
  const queries = ROUNDS * PER_ROUND;
  for (const c of all) {
    const ms = median(wall.get(c.name)!);
    const [a, b] = cpu.get(c.name)!.map((s) => round((s * 1000) / queries, 1));
    console.log(`${c.name.padEnd(8)} median ${round(ms, 1)} ms ×${round(ms / directMedian, 2)}  CPU/query ${c.name === 'direct' ? `${a} ms` : `service ${a} + Kùzu ${b} ms`}`);
  }
  console.log(`load at the end ${os.loadavg().map((l) => round(l, 1)).join(' ')}`);
  for (const c of contestants) await c.api.close();
  await ceiling.close();
} finally {
  for (const s of services) await s.stop().catch(() => undefined);
  builds.baseline.dispose();
  builds.current.dispose();
  rmSync(dir, { recursive: true, force: true });
}
