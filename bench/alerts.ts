/**
 * The alert bench: `npm run bench:alerts [-- --quick] [--out FILE]`. Generates a transfer graph (1,000,000 edges;
 * --quick: 20,000) with bench/lib/graph-csv.ts, loads it into a data source's embedded graph with
 * `alert-webhooks graph load`, on a service whose database is PostgreSQL (a throwaway database of its own on
 * BENCH_PG_URL's server) with ONE webhook subscribed to the source's newCase and newMatch. Delivery is off
 * (deliveryFrequency 'none'): each event's delivery row is written, nothing is sent, so the figure is the recording's
 * alone. Then two alerts, a small and a large one (one edge pattern, cut by amount), each run three times with
 * waitForRun on a freshly started service over an empty record (so each peak RSS is that run's own), the large one
 * then run nine times more, unchanged (three in --quick); then a huge one (300,000 matches) once, for its peak RSS beside the other two
 * (and beside Kùzu's own on each query, run alone in a process of its own). Right before each run, its bare query on Kùzu called directly in this process
 * on a copy of the graph, reading every row as the service's Kùzu process does (the ceiling); beside each, the CPU
 * time of the service, its Kùzu process and the database's backends. Figures go to bench/results/alerts-latest.json;
 * bench/README.md ("Alerts") says how to read them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AlertRunRecord } from '../src/alerts/alerts.js';
import pg from 'pg';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { generateGraph } from './lib/graph-csv.js';
import { graphLoad, kuzuChildPid } from './lib/graph-load.js';
import { KuzuCeiling } from './lib/kuzu-ceiling.js';
import { bareQueryPeakRssMb } from './lib/kuzu-peak.js';
import { median, phase, round } from './lib/progress.js';
import { processCpuSeconds } from './lib/cpu.js';
import { peakRssMb } from './lib/rss.js';
import { ServiceProcess } from './lib/service.js';
import { onServer as runOnServer } from './lib/service-database.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outIndex = args.indexOf('--out');
const outFile = path.resolve(outIndex >= 0 && args[outIndex + 1] ? args[outIndex + 1]! : path.join(ROOT, 'bench/results/alerts-latest.json'));
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GRAPH_MEMORY_MB = process.env.GRAPH_MEMORY_MB ?? '256';
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'bench';
// Amounts are uniform in [0, 1000): `amount < x` keeps x/1000 of the edges. The large alert finds 45,000 matches
// of 1,000,000 edges (900 of 20,000 in --quick), the small one 10,000 (200): both under the 50,000 deliveries one run
// may record (MAX_DELIVERIES_PER_RUN, one webhook subscribed), so each run is whole.
// The huge one (300,000 matches; 6,000 in --quick) is run once, for its memory: flat in the number of matches. Its
// run would pass that bound with the webhook subscribed, so the webhook is deleted before it.
const PLAN = quick
  ? { accounts: 2_000, edges: 20_000, smallBelow: 10, largeBelow: 45, hugeBelow: 300 }
  : { accounts: 200_000, edges: 1_000_000, smallBelow: 10, largeBelow: 45, hugeBelow: 300 };
// First runs of each alert: medians of this many.
const ROUNDS = 3;
// Unchanged reruns of the large one (each paired with its bare query): a median of this many. Cheap (a second or
// two each), and on this shared machine single rounds of the bare query were seen twice as slow as the next (1,268
// against 604 ms): three were too few for a steady median.
const RERUNS = quick ? 3 : 9;
const MAX_MATCHES = 1_000_000;
// One transfer a match; its case is the sender (target `a`): a sender's first match opens its case (newCase),
// its others add to it (newMatch).
const queryBelow = (amount: number) => `MATCH (a:Account)-[t:TRANSFER]->(b:Account) WHERE t.amount < ${amount} RETURN a, t, b`;

type RunRecord = Pick<AlertRunRecord, 'outcome' | 'durationMs' | 'rowsRead' | 'matchesNew' | 'matchesSeen' | 'casesOpened' | 'eventsEmitted'>;

const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-alert-bench-'));
const dataDir = path.join(dir, 'data');
mkdirSync(dataDir);
const dbName = `aw_alert_bench_${process.pid}`;
const dbUrl = new URL(PG_URL);
dbUrl.pathname = `/${dbName}`;
const env = {
  DATA_DIR: dataDir,
  DATABASE_URL: dbUrl.toString(),
  ADMIN_PASSWORD,
  PUBLIC_BASE_URL: 'http://localhost:3000',
  GRAPH_MEMORY_MB,
  ALERTS_MAX_MATCHES_LIMIT: String(MAX_MATCHES),
};
const onServer = (sql: string) => runOnServer(PG_URL, sql);
const loadAverage = () => os.loadavg().map((l) => round(l, 2));

phase('building the service');
const build = await buildService();
let service: ServiceProcess | undefined;
let api: AdminClient | undefined;
let ceiling: KuzuCeiling | undefined;
await onServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await onServer(`CREATE DATABASE ${dbName}`);
const db = new pg.Client({ connectionString: dbUrl.toString() });
try {
  const loadAtStart = loadAverage();
  phase(`generating ${PLAN.edges.toLocaleString('en')} edges between ${PLAN.accounts.toLocaleString('en')} accounts`);
  const graph = await generateGraph(dir, PLAN.accounts, PLAN.edges);

  const startService = async () => {
    service = await ServiceProcess.start(build.cli, env);
    api = new AdminClient(service.baseUrl);
    await api.signIn(ADMIN_PASSWORD);
    return api;
  };
  const stopService = async () => {
    await api?.close();
    await service?.stop();
    api = undefined;
    service = undefined;
  };

  phase('creating the data source and its webhook (delivery off)');
  let a = await startService();
  await a.settings({ deliveryFrequency: 'none', cleanupFrequency: 'none' });
  await a.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Bench', graph: { vendor: 'embedded' } });
  // Never called: delivery is off. On loopback all the same (the discard port), as every bench URL.
  await a.call('POST', '/api/admin/webhooks', {
    url: 'http://127.0.0.1:9/alert-bench',
    secret: 'alert-bench-webhook-secret',
    events: [{ eventType: 'newCase', sourceKey: SOURCE }, { eventType: 'newMatch', sourceKey: SOURCE }],
  });
  await stopService();

  phase('loading the CSV files with `graph load`');
  const printed = await graphLoad(build.cli, env, SOURCE, { accounts: graph.accountsFile, transfers: graph.transfersFile });
  const loadedEdges = Number(/edges TRANSFER: ([\d,]+)/.exec(printed)?.[1]?.replaceAll(',', ''));
  if (loadedEdges !== PLAN.edges) throw new Error(`graph load printed an unexpected report: ${printed}`);

  // The ceiling (kuzu-ceiling.ts) stays open beside the service: each run is measured right after its bare query, so
  // both see the same machine (its load moves within minutes here).
  phase('opening the ceiling: the bare queries on Kùzu directly');
  ceiling = KuzuCeiling.open(dataDir, SOURCE, dir, Number(GRAPH_MEMORY_MB));
  /** The bare query once, every row read as the service's Kùzu process reads them: wall ms, this process's CPU ms. */
  const bare = async (below: number) => {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const rows = await ceiling!.readAll(queryBelow(below));
    const cpu = process.cpuUsage(cpuBefore);
    return { rows, ms: Math.round(performance.now() - started), cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
  };
  // Warms the buffer pool, as the service's first run of each alert does its own.
  const bareRows = { small: (await bare(PLAN.smallBelow)).rows, large: (await bare(PLAN.largeBelow)).rows };

  // The alerts' queries are checked on the graph: created once it is loaded, then the service starts afresh.
  phase('creating the alerts');
  a = await startService();
  const createAlert = async (title: string, below: number) =>
    (await a.call<{ id: number }>('POST', `/api/admin/${SOURCE}/alerts`, { title, queries: [{ name: title, query: queryBelow(below), dialect: 'cypher' }], target: 'a', maxMatches: MAX_MATCHES })).id;
  const smallAlert = await createAlert(`Transfers under ${PLAN.smallBelow}`, PLAN.smallBelow);
  const largeAlert = await createAlert(`Transfers under ${PLAN.largeBelow}`, PLAN.largeBelow);
  const hugeAlert = await createAlert(`Transfers under ${PLAN.hugeBelow}`, PLAN.hugeBelow);
  await stopService();

  await db.connect();
  const counts = async () => {
    const { rows } = await db.query<{ cases: string; matches: string; events: string; deliveries: string }>(
      `SELECT (SELECT count(*) FROM cases) AS cases, (SELECT count(*) FROM alert_matches) AS matches,
              (SELECT count(*) FROM webhook_events) AS events, (SELECT count(*) FROM webhook_deliveries) AS deliveries`,
    );
    const r = rows[0]!;
    return { cases: Number(r.cases), matches: Number(r.matches), events: Number(r.events), deliveries: Number(r.deliveries) };
  };
  /** CPU seconds so far of the bench database's PostgreSQL backends (the service's connections), by pid. */
  const backendsCpu = async () => {
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return new Map(rows.map(({ pid }) => [pid, processCpuSeconds(pid)]));
  };
  /** One run with waitForRun, right after its bare query: wall time as the caller sees it, the run's record, CPU. */
  const runAlert = async (alertId: number, below: number) => {
    const bareRun = await bare(below);
    const before = await counts();
    const loadBefore = loadAverage();
    const kuzuPid = kuzuChildPid(service!.child.pid!);
    const cpuBefore = { service: processCpuSeconds(service!.child.pid!), kuzu: processCpuSeconds(kuzuPid), postgres: await backendsCpu() };
    const started = performance.now();
    const answer = await api!.call<{ alreadyRunning: boolean }>('POST', `/api/admin/${SOURCE}/alerts/${alertId}/run`, { waitForRun: true });
    const wallMs = Math.round(performance.now() - started);
    if (answer.alreadyRunning) throw new Error(`alert ${alertId} was already running`);
    const postgresAfter = await backendsCpu();
    const cpuMs = {
      service: Math.round((processCpuSeconds(service!.child.pid!) - cpuBefore.service) * 1000),
      kuzu: Math.round((processCpuSeconds(kuzuPid) - cpuBefore.kuzu) * 1000),
      postgres: Math.round([...postgresAfter].reduce((sum, [pid, seconds]) => sum + seconds - (cpuBefore.postgres.get(pid) ?? 0), 0) * 1000),
    };
    const { items } = await api!.call<{ items: RunRecord[] }>('GET', `/api/${SOURCE}/alerts/${alertId}/runs?limit=1`);
    const run = items[0]!;
    if (run.outcome !== 'ok') throw new Error(`the run of alert ${alertId} ended ${run.outcome}`);
    const after = await counts();
    const added = { cases: after.cases - before.cases, matches: after.matches - before.matches, events: after.events - before.events, deliveries: after.deliveries - before.deliveries };
    return { wallMs, run, added, cpuMs, bare: bareRun, ratioToBare: round(wallMs / bareRun.ms, 2), loadBefore, matchesPerSecond: Math.round(run.matchesNew / (wallMs / 1000)) };
  };
  type Run = Awaited<ReturnType<typeof runAlert>>;
  /** The run of `runs` with the median matches/s (a whole run's figures, not a mix of several). */
  const medianRun = (runs: Run[]) => [...runs].sort((x, y) => x.matchesPerSecond - y.matchesPerSecond)[Math.floor(runs.length / 2)]!;

  /**
   * ROUNDS first runs, each on a fresh service over an empty record (the recorded rows emptied between them), so
   * each peak RSS is its run's own; then, for the large alert, RERUNS unchanged reruns on the last one's service.
   */
  const sized = async (label: string, alertId: number, below: number, reruns: boolean, rounds = ROUNDS) => {
    const firsts: Run[] = [];
    // Beside the service's Kùzu process: Kùzu alone on the same query, in a process of its own (kuzu-peak.ts).
    let memory = { servicePeakRssMb: 0, kuzuPeakRssMb: 0, bareKuzuPeakRssMb: await bareQueryPeakRssMb(ceiling!.folder, Number(GRAPH_MEMORY_MB), queryBelow(below)) };
    const again: Run[] = [];
    for (let round = 1; round <= rounds; round++) {
      phase(`${label} alert: first run ${round} of ${rounds}, on a fresh service`);
      await db.query('TRUNCATE cases, alert_matches, alert_runs, webhook_events, webhook_deliveries CASCADE');
      a = await startService();
      firsts.push(await runAlert(alertId, below));
      // The peaks of a first run alone, so the two sizes compare: the largest of the rounds.
      memory = {
        ...memory,
        servicePeakRssMb: Math.max(memory.servicePeakRssMb, service!.peakRssMb()),
        kuzuPeakRssMb: Math.max(memory.kuzuPeakRssMb, peakRssMb(kuzuChildPid(service!.child.pid!))),
      };
      if (reruns && round === rounds) {
        phase(`${label} alert: ${RERUNS} unchanged reruns`);
        for (let i = 0; i < RERUNS; i++) again.push(await runAlert(alertId, below));
      }
      await stopService();
    }
    for (const first of firsts) {
      // Every row read is a match, new or met again in the run (parallel transfers of one pair share an id).
      // Every row read; its distinct matches (rows of one match are one) new or met again, none more than the rows.
      if (first.run.rowsRead !== first.bare.rows || first.run.matchesNew + first.run.matchesSeen > first.run.rowsRead) {
        throw new Error(`a run of the ${label} alert read ${first.run.rowsRead} rows (${first.run.matchesNew} new matches, ${first.run.matchesSeen} met again) where its bare query read ${first.bare.rows}`);
      }
    }
    return { firsts, again, memory };
  };
  const small = await sized('small', smallAlert, PLAN.smallBelow, false);
  const large = await sized('large', largeAlert, PLAN.largeBelow, true);
  await db.query('DELETE FROM webhooks');
  const huge = await sized('huge', hugeAlert, PLAN.hugeBelow, false, 1);
  const firstOf = (runs: Run[]) => ({
    ...medianRun(runs),
    rounds: runs.map((r) => ({ wallMs: r.wallMs, matchesPerSecond: r.matchesPerSecond, bareMs: r.bare.ms, ratioToBare: r.ratioToBare, cpuMs: r.cpuMs, loadBefore: r.loadBefore })),
  });

  const figures = {
    mode: quick ? 'quick' : 'default',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / 2 ** 20), node: process.version, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAverage() },
    settings: { ...PLAN, rounds: ROUNDS, reruns: RERUNS, graphMemoryMb: Number(GRAPH_MEMORY_MB), database: 'postgres', webhooks: 1, deliveryFrequency: 'none', smallQuery: queryBelow(PLAN.smallBelow), largeQuery: queryBelow(PLAN.largeBelow) },
    load: { nodes: PLAN.accounts, edges: loadedEdges },
    bare: { small: { rows: bareRows.small }, large: { rows: bareRows.large }, huge: { rows: huge.firsts[0]!.bare.rows } },
    // Each size's median first run (by matches/s), its rounds beside it.
    runs: { small: firstOf(small.firsts), large: firstOf(large.firsts), huge: firstOf(huge.firsts) },
    rerun: {
      runs: large.again.map((r) => ({ wallMs: r.wallMs, bareMs: r.bare.ms, ratioToBare: r.ratioToBare, cpuMs: r.cpuMs, bareCpuMs: r.bare.cpuMs, durationMs: r.run.durationMs, eventsEmitted: r.run.eventsEmitted, matchesSeen: r.run.matchesSeen, added: r.added, loadBefore: r.loadBefore })),
      events: large.again.reduce((sum, r) => sum + r.run.eventsEmitted, 0),
      // The median of the reruns' ratios, each to the bare query run right before it.
      ratioToBare: round(median(large.again.map((r) => r.ratioToBare * 100)) / 100, 2),
    },
    memory: { small: small.memory, large: large.memory, huge: huge.memory },
  };
  writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
  const line = (label: string, r: typeof figures.runs.small) =>
    `${label}: ${r.run.matchesNew.toLocaleString('en')} matches, ${r.added.cases.toLocaleString('en')} cases, ${r.added.events.toLocaleString('en')} events, ${r.added.deliveries.toLocaleString('en')} deliveries in ${r.wallMs} ms (run ${r.run.durationMs} ms): ${r.matchesPerSecond.toLocaleString('en')} matches/s, median of ${r.rounds.length} (${r.rounds.map((x) => x.matchesPerSecond.toLocaleString('en')).join(', ')}); bare query ${r.bare.ms} ms just before (×${r.ratioToBare})
  CPU: service ${r.cpuMs.service} ms, Kùzu process ${r.cpuMs.kuzu} ms, PostgreSQL ${r.cpuMs.postgres} ms; bare query ${r.bare.cpuMs} ms (load ${r.loadBefore.join(' ')})`;
  const reruns = figures.rerun.runs;
  console.log(`
Alert Webhooks alert bench (${figures.mode}), PostgreSQL, 1 webhook, delivery off, GRAPH_MEMORY_MB=${GRAPH_MEMORY_MB}, load ${loadAtStart.join(' ')}
graph: ${PLAN.accounts.toLocaleString('en')} accounts, ${loadedEdges.toLocaleString('en')} transfers
${line('small run', figures.runs.small)}
${line('large run', figures.runs.large)}
unchanged rerun, ${figures.rerun.events} events: ×${figures.rerun.ratioToBare} the bare query (median of ${reruns.length}: ${reruns.map((r) => `${r.wallMs}/${r.bareMs} ms`).join(', ')})
  CPU: service ${median(reruns.map((r) => r.cpuMs.service))} ms, Kùzu process ${median(reruns.map((r) => r.cpuMs.kuzu))} ms, PostgreSQL ${median(reruns.map((r) => r.cpuMs.postgres))} ms; bare query ${median(reruns.map((r) => r.bareCpuMs))} ms (medians)
${line('huge run (once, for its memory)', figures.runs.huge)}
peak RSS, service / its Kùzu process (Kùzu alone on the query, in a process of its own):
${(['small', 'large', 'huge'] as const).map((size) => `  ${size}: ${figures.runs[size].run.matchesNew.toLocaleString('en')} matches: ${figures.memory[size].servicePeakRssMb} MB / ${figures.memory[size].kuzuPeakRssMb} MB (${figures.memory[size].bareKuzuPeakRssMb} MB)`).join('\n')}
figures written to ${path.relative(process.cwd(), outFile)}`);
} finally {
  await db.end().catch(() => undefined);
  await ceiling?.close();
  await api?.close().catch(() => undefined);
  await service?.stop().catch(() => undefined);
  build.dispose();
  rmSync(dir, { recursive: true, force: true });
  await onServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
}
