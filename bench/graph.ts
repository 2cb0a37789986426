/**
 * The graph bench: `npm run bench:graph [-- --quick] [--starts N] [--out FILE]`. Generates a transfer graph (1,000,000 edges;
 * --quick: 20,000), loads it into a data source's embedded graph with `alert-webhooks graph load` (the compiled CLI,
 * as an operator runs it), then runs one 2-hop pattern query alternately through the service's
 * POST /api/:sourceKey/graph/run/query and through Kùzu called directly in this process on a copy of the same
 * graph (the ceiling). Reports the load's edges/s, the service's overhead as the ratio of the medians, and the peak
 * RSS of the service and of its Kùzu process with the graph open. Figures go to bench/results/graph-latest.json;
 * bench/README.md ("Graph") says how to read them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { generateGraph } from './lib/graph-csv.js';
import { graphLoad, kuzuChildPid } from './lib/graph-load.js';
import { KuzuCeiling } from './lib/kuzu-ceiling.js';
import { exactMedian as median, phase, round } from './lib/progress.js';
import { processCpuSeconds } from './lib/cpu.js';
import { peakRssMb } from './lib/rss.js';
import { ServiceProcess } from './lib/service.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outIndex = args.indexOf('--out');
const outFile = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1]! : path.join(ROOT, 'bench/results/graph-latest.json'));
const PLAN = quick ? { accounts: 2_000, edges: 20_000, rounds: 3, queriesPerRound: 5 } : { accounts: 200_000, edges: 1_000_000, rounds: 5, queriesPerRound: 20 };
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'bench';
const GRAPH_MEMORY_MB = process.env.GRAPH_MEMORY_MB ?? '256';
// 2-hop: who received from an account's recipients. Starting from a few accounts (degree ~5 out), a few hundred
// rows of nodes and edges: an investigation's query, where the service's part (IPC, mapping, JSON, HTTP) shows.
// --starts N (default 20) sizes the answer, to see how the service's part grows with it (bench/README.md, "Graph").
const startsIndex = args.indexOf('--starts');
const START_ACCOUNTS = startsIndex >= 0 ? Number(args[startsIndex + 1]) : 20;
if (!Number.isSafeInteger(START_ACCOUNTS) || START_ACCOUNTS < 1) throw new Error('--starts takes a whole number of start accounts, 1 or more');
const QUERY = `MATCH (a:Account)-[t1:TRANSFER]->(b:Account)-[t2:TRANSFER]->(c:Account) WHERE a.id < ${START_ACCOUNTS} RETURN a, t1, b, t2, c`;
const LIMIT = 10_000;

async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-graph-bench-'));
const dataDir = path.join(dir, 'data');
mkdirSync(dataDir);
const env = { DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000', GRAPH_MEMORY_MB };
phase('building the service');
const build = await buildService();
let service: ServiceProcess | undefined;
let api: AdminClient | undefined;
try {
  phase(`generating ${PLAN.edges.toLocaleString('en')} edges between ${PLAN.accounts.toLocaleString('en')} accounts`);
  const graph = await generateGraph(dir, PLAN.accounts, PLAN.edges);

  phase('creating the data source');
  service = await ServiceProcess.start(build.cli, env);
  api = new AdminClient(service.baseUrl);
  await api.signIn(ADMIN_PASSWORD);
  await api.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Bench', graph: { vendor: 'embedded' } });
  await api.close();
  await service.stop();

  phase('loading the CSV files with `graph load`');
  const printed = await graphLoad(build.cli, env, SOURCE, { accounts: graph.accountsFile, transfers: graph.transfersFile });
  const loadedEdges = Number(/edges TRANSFER: ([\d,]+)/.exec(printed)?.[1]?.replaceAll(',', ''));
  const loadSeconds = Number(/ in ([\d.]+) s\b/.exec(printed)?.[1]);
  if (loadedEdges !== PLAN.edges || !(loadSeconds > 0)) throw new Error(`graph load printed an unexpected report: ${printed}`);

  const ceiling = KuzuCeiling.open(dataDir, SOURCE, dir, Number(GRAPH_MEMORY_MB));
  const direct = async () => {
    const rows = await ceiling.readAll(QUERY);
    if (rows === 0) throw new Error('the direct query found nothing');
    return rows;
  };

  phase('the 2-hop query: the service and Kùzu directly, alternately');
  service = await ServiceProcess.start(build.cli, env);
  api = new AdminClient(service.baseUrl);
  await api.signIn(ADMIN_PASSWORD);
  let answerItems = 0;
  const viaService = async () => {
    const answer = await api!.call<{ nodes: unknown[]; edges: unknown[]; truncatedByLimit: boolean }>('POST', `/api/${SOURCE}/graph/run/query`, { query: QUERY, dialect: 'cypher', limit: LIMIT });
    if (answer.truncatedByLimit || answer.edges.length === 0) throw new Error('the service answered a cut or empty subgraph');
    answerItems = answer.nodes.length + answer.edges.length;
  };
  // Warm both: the graph's pages in each buffer pool, the service's code paths.
  for (let i = 0; i < 3; i++) {
    await direct();
    await viaService();
  }
  const serviceMs: number[] = [];
  const directMs: number[] = [];
  const rows = await direct();
  // CPU seconds beside the wall times, less moved by a busy machine: this process's own for the direct queries
  // (Kùzu's threads included), the service's and its Kùzu process's for the queries through the API.
  const kuzuPid = kuzuChildPid(service.child.pid!);
  const cpu = { direct: 0, service: 0, kuzu: 0 };
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  for (let r = 0; r < PLAN.rounds; r++) {
    const own = process.cpuUsage();
    for (let q = 0; q < PLAN.queriesPerRound; q++) directMs.push(await timed(async () => void (await direct())));
    const used = process.cpuUsage(own);
    cpu.direct += (used.user + used.system) / 1e6;
    const before = { service: processCpuSeconds(service.child.pid!), kuzu: processCpuSeconds(kuzuPid) };
    for (let q = 0; q < PLAN.queriesPerRound; q++) serviceMs.push(await timed(viaService));
    cpu.service += processCpuSeconds(service.child.pid!) - before.service;
    cpu.kuzu += processCpuSeconds(kuzuPid) - before.kuzu;
  }
  const queries = PLAN.rounds * PLAN.queriesPerRound;
  const cpuMsPerQuery = { direct: round((cpu.direct * 1000) / queries, 2), service: round((cpu.service * 1000) / queries, 2), kuzu: round((cpu.kuzu * 1000) / queries, 2) };
  const servicePeakRssMb = service.peakRssMb();
  const kuzuPeakRssMb = peakRssMb(kuzuChildPid(service.child.pid!));
  await api.close();
  await service.stop();
  service = undefined;
  await ceiling.close();

  const figures = {
    mode: quick ? 'quick' : 'default',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / 2 ** 20), node: process.version },
    settings: { ...PLAN, graphMemoryMb: Number(GRAPH_MEMORY_MB), query: QUERY },
    load: { nodes: PLAN.accounts, edges: loadedEdges, seconds: loadSeconds, edgesPerSecond: Math.round(loadedEdges / loadSeconds) },
    query: {
      rows,
      answerItems,
      directMedianMs: round(median(directMs), 2),
      serviceMedianMs: round(median(serviceMs), 2),
      ratio: round(median(serviceMs) / median(directMs), 2),
      cpuMsPerQuery,
      cpuRatio: round((cpuMsPerQuery.service + cpuMsPerQuery.kuzu) / cpuMsPerQuery.direct, 2),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)),
    },
    memory: { servicePeakRssMb, kuzuPeakRssMb, totalPeakRssMb: servicePeakRssMb + kuzuPeakRssMb },
  };
  writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`
Alert Webhooks graph bench (${figures.mode}), GRAPH_MEMORY_MB=${GRAPH_MEMORY_MB}
load: ${PLAN.accounts.toLocaleString('en')} nodes + ${loadedEdges.toLocaleString('en')} edges in ${loadSeconds} s: ${figures.load.edgesPerSecond.toLocaleString('en')} edges/s (nodes included in the time)
2-hop query (${rows} rows, ${answerItems} nodes and edges answered): Kùzu directly ${figures.query.directMedianMs} ms, run/query ${figures.query.serviceMedianMs} ms (medians of ${directMs.length}): ×${figures.query.ratio} (load ${loadAtStart.join(' ')})
  CPU per query: directly ${cpuMsPerQuery.direct} ms; through run/query, service ${cpuMsPerQuery.service} ms + Kùzu process ${cpuMsPerQuery.kuzu} ms: ×${figures.query.cpuRatio}
peak RSS with the graph open: service ${servicePeakRssMb} MB, its Kùzu process ${kuzuPeakRssMb} MB
figures written to ${path.relative(process.cwd(), outFile)}`);
} finally {
  await api?.close().catch(() => undefined);
  await service?.stop().catch(() => undefined);
  build.dispose();
  rmSync(dir, { recursive: true, force: true });
}
