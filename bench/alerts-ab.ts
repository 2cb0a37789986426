/**
 * The alert bench's unchanged rerun side by side:
 * `npx tsx bench/alerts-ab.ts [--baseline REF] [--quick] [--rounds N] [--below AMOUNT] [--first]`.
 * Two services (the revision REF, main by default, and this checkout), each on PostgreSQL (a throwaway database of
 * its own on BENCH_PG_URL's server) and on a copy of the same loaded graph, with the large alert of bench/alerts.ts
 * (transfers under AMOUNT, 60 by default: 59,910 matches) run once on each, then rerun unchanged in turn with its
 * bare query on Kùzu called directly (the ceiling), the order rotating each round, so the same load falls on all
 * three. Prints each one's median wall time, its ratio to the bare query's median, its CPU per rerun (service, its
 * Kùzu process, its database's backends) and the two processes' peak RSS. --first: first runs instead of reruns, each
 * on an emptied record. AB_PROFILE_DIR: CPU profiles of this
 * checkout's service and its Kùzu process, written as they stop. bench/README.md ("Alerts") has the figures.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { AdminClient } from './lib/api.js';
import { buildService, buildServiceAt } from './lib/build.js';
import { processCpuSeconds } from './lib/cpu.js';
import { generateGraph } from './lib/graph-csv.js';
import { graphLoad, kuzuChildPid } from './lib/graph-load.js';
import { KuzuCeiling } from './lib/kuzu-ceiling.js';
import { median, phase, round } from './lib/progress.js';
import { peakRssMb } from './lib/rss.js';
import { ServiceProcess } from './lib/service.js';
import { onServer as runOnServer } from './lib/service-database.js';

const args = process.argv.slice(2);
const option = (name: string) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
const quick = args.includes('--quick');
const BASELINE = option('--baseline') ?? 'main';
const ROUNDS = Number(option('--rounds') ?? (quick ? 3 : 6));
const PLAN = quick ? { accounts: 2_000, edges: 20_000 } : { accounts: 200_000, edges: 1_000_000 };
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'bench';
const GRAPH_MEMORY_MB = '256';
// Amounts are uniform in [0, 1000): --below 45 (the default, the alert bench's large alert) finds about 45,000 matches, under the 50,000 deliveries a run records.
const BELOW = Number(option('--below') ?? 45);
// --first: first runs instead, each on an emptied record (every match new: cases, events and deliveries written).
const FIRST = args.includes('--first');
const QUERY = `MATCH (a:Account)-[t:TRANSFER]->(b:Account) WHERE t.amount < ${BELOW} RETURN a, t, b`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-alerts-ab-'));
const databases = { baseline: `aw_alerts_ab_${process.pid}_baseline`, current: `aw_alerts_ab_${process.pid}_current` };
const urlOf = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString();
const onServer = (sql: string) => runOnServer(PG_URL, sql);
const envOf = (dataDir: string, database: string) => ({
  DATA_DIR: dataDir,
  DATABASE_URL: urlOf(database),
  ADMIN_PASSWORD,
  PUBLIC_BASE_URL: 'http://localhost:3000',
  GRAPH_MEMORY_MB,
  ALERTS_MAX_MATCHES_LIMIT: '1000000',
});
const loadAverage = () => os.loadavg().map((l) => round(l, 1)).join(' ');

phase(`building the service at ${BASELINE} and this checkout`);
const builds = { baseline: await buildServiceAt(BASELINE), current: await buildService() };
const services: ServiceProcess[] = [];
const clients: pg.Client[] = [];
try {
  for (const name of Object.values(databases)) await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await onServer(`CREATE DATABASE ${databases.current}`);
  const graph = await generateGraph(dir, PLAN.accounts, PLAN.edges);
  const dataDir = path.join(dir, 'data-current');
  mkdirSync(dataDir);

  phase('creating the source, its webhook (delivery off) and loading the graph');
  let setup = await ServiceProcess.start(builds.current.cli, envOf(dataDir, databases.current));
  let admin = new AdminClient(setup.baseUrl);
  await admin.signIn(ADMIN_PASSWORD);
  await admin.settings({ deliveryFrequency: 'none', cleanupFrequency: 'none' });
  await admin.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Bench', graph: { vendor: 'embedded' } });
  // Never called: delivery is off. On loopback all the same (the discard port), as every bench URL.
  await admin.call('POST', '/api/admin/webhooks', {
    url: 'http://127.0.0.1:9/alerts-ab',
    secret: 'alerts-ab-webhook-secret',
    events: [{ eventType: 'newCase', sourceKey: SOURCE }, { eventType: 'newMatch', sourceKey: SOURCE }],
  });
  await admin.close();
  await setup.stop();
  await graphLoad(builds.current.cli, envOf(dataDir, databases.current), SOURCE, { accounts: graph.accountsFile, transfers: graph.transfersFile });
  setup = await ServiceProcess.start(builds.current.cli, envOf(dataDir, databases.current));
  admin = new AdminClient(setup.baseUrl);
  await admin.signIn(ADMIN_PASSWORD);
  const { id: alertId } = await admin.call<{ id: number }>('POST', `/api/admin/${SOURCE}/alerts`, {
    title: `Transfers under ${BELOW}`,
    queries: [{ name: `under ${BELOW}`, query: QUERY, dialect: 'cypher' }],
    target: 'a',
    maxMatches: 1_000_000,
  });
  await admin.close();
  await setup.stop();
  // The baseline's copy: the same database (as a template) and the same graph files.
  await onServer(`CREATE DATABASE ${databases.baseline} TEMPLATE ${databases.current}`);
  const baselineDir = path.join(dir, 'data-baseline');
  cpSync(dataDir, baselineDir, { recursive: true });

  const ceiling = KuzuCeiling.open(dataDir, SOURCE, dir, Number(GRAPH_MEMORY_MB));
  const bareRows = await ceiling.readAll(QUERY);
  const profile = process.env.AB_PROFILE_DIR;
  const contestants = [];
  for (const name of ['baseline', 'current'] as const) {
    const data = name === 'current' ? dataDir : baselineDir;
    // The service passes --cpu-prof on to its Kùzu process: both write a profile as they stop.
    const service = await ServiceProcess.start(builds[name].cli, envOf(data, databases[name]), name === 'current' ? profile : undefined);
    services.push(service);
    const api = new AdminClient(service.baseUrl);
    await api.signIn(ADMIN_PASSWORD);
    const db = new pg.Client({ connectionString: urlOf(databases[name]) });
    await db.connect();
    clients.push(db);
    const backendsCpu = async () => {
      const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      return rows.reduce((sum, { pid }) => sum + processCpuSeconds(pid), 0);
    };
    const run = async () => {
      const answer = await api.call<{ alreadyRunning: boolean }>('POST', `/api/admin/${SOURCE}/alerts/${alertId}/run`, { waitForRun: true });
      if (answer.alreadyRunning) throw new Error(`${name}: the alert was already running`);
      const { items } = await api.call<{ items: { outcome: string; matchesNew: number; matchesSeen: number; eventsEmitted: number }[] }>('GET', `/api/${SOURCE}/alerts/${alertId}/runs?limit=1`);
      return items[0]!;
    };
    phase(`${name}: the first run`);
    const first = await run();
    if (first.matchesNew !== bareRows) throw new Error(`${name}'s first run recorded ${first.matchesNew} matches where the bare query read ${bareRows}`);
    contestants.push({
      name,
      api,
      // Every process's CPU seconds so far: the service, its Kùzu process, its database's backends.
      cpu: async () => [processCpuSeconds(service.child.pid!), processCpuSeconds(kuzuChildPid(service.child.pid!)), await backendsCpu()],
      peaks: () => `peak RSS service ${service.peakRssMb()} MB, Kùzu ${peakRssMb(kuzuChildPid(service.child.pid!))} MB`,
      rerun: async () => {
        if (FIRST) await db.query('TRUNCATE cases, alert_matches, alert_runs, webhook_events, webhook_deliveries CASCADE');
        const record = await run();
        if (FIRST ? record.matchesNew !== bareRows : record.outcome !== 'ok' || record.eventsEmitted !== 0 || record.matchesNew !== 0) throw new Error(`${name}'s run was not as expected: ${JSON.stringify(record)}`);
      },
    });
  }
  const all = [{ name: 'bare', peaks: () => '', cpu: async () => [processCpuSeconds(process.pid)], rerun: async () => void (await ceiling.readAll(QUERY)) }, ...contestants];
  for (const c of all) await c.rerun();
  const wall = new Map(all.map((c) => [c.name, [] as number[]]));
  const cpu = new Map(all.map((c) => [c.name, [] as number[][]]));
  phase(`${ROUNDS} rounds of ${FIRST ? 'a first run' : 'an unchanged rerun'} each, the order rotating (load ${loadAverage()})`);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < all.length; k++) {
      const c = all[(r + k) % all.length]!;
      const before = await c.cpu();
      const started = performance.now();
      await c.rerun();
      wall.get(c.name)!.push(performance.now() - started);
      const after = await c.cpu();
      cpu.get(c.name)!.push(after.map((s, i) => (s - before[i]!) * 1000));
    }
  }
  const bareMedian = median(wall.get('bare')!);
  for (const c of all) {
    const ms = median(wall.get(c.name)!);
    const spent = cpu.get(c.name)!;
    const part = (i: number) => Math.round(median(spent.map((s) => s[i]!)));
    const cpuText = c.name === 'bare' ? `${part(0)} ms` : `service ${part(0)}, Kùzu ${part(1)}, PostgreSQL ${part(2)} ms`;
    console.log(`${c.name.padEnd(8)} median ${Math.round(ms)} ms ×${round(ms / bareMedian, 2)} (${wall.get(c.name)!.map(Math.round).join(', ')})  CPU/rerun ${cpuText}  ${c.peaks()}`);
  }
  console.log(`load at the end ${loadAverage()}`);
  for (const c of contestants) await c.api.close();
  await ceiling.close();
} finally {
  for (const c of clients) await c.end().catch(() => undefined);
  for (const s of services) await s.stop().catch(() => undefined);
  builds.baseline.dispose();
  builds.current.dispose();
  rmSync(dir, { recursive: true, force: true });
  for (const name of Object.values(databases)) await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
}
