/**
 * The contention bench (issue 30): `npm run bench:contention [-- --quick] [--deliveries N] [--rounds R]
 * [--only service,graphile-worker,…] [--baseline REF] [--conditions quiet,busy] [--no-ceiling] [--no-latency] [--profile] [--out FILE]`. The service (on PostgreSQL and on PGlite), graphile-worker and
 * pg-boss drain the same backlog to the same receiver, each by a fresh process, on a quiet machine and beside a fixed
 * CPU load (one busy process per core, started and stopped here), interleaved over rounds. For each drain: deliveries/s,
 * CPU µs per delivery of each process, PostgreSQL statements per delivery, and context switches per delivery of the
 * sender and of its PostgreSQL backends, with the load average. Then the service's latency under `immediate`, quiet
 * and busy. Writes a table to stdout and the figures to bench/results/contention.json; bench/README.md reads them.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildService, buildServiceAt, type ServiceBuild } from './lib/build.js';
import { measureCeiling } from './lib/ceiling.js';
import { BENCH_WEBHOOKS, PeerContestant, ServiceContestant, type Contestant } from './lib/contestants.js';
import { CpuLoad } from './lib/cpu-load.js';
import { measureLatency, type Latency } from './lib/latency.js';
import { graphileWorkerPeer } from './lib/peers/graphile-worker.js';
import { PeerDatabase } from './lib/peers/peer.js';
import { pgBossPeer } from './lib/peers/pg-boss.js';
import { loadAverage, mainThread, ProcessGroups, type Counters, type GroupUse } from './lib/process-stats.js';
import { median, phase, round, sleep, waitUntil } from './lib/progress.js';
import { Receiver } from './lib/receiver-client.js';
import { StatementCounter, statementsBetween, type StatementCount } from './lib/statements.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const quick = flag('quick');
const DELIVERIES = Number(option('deliveries', quick ? '3000' : '50000'));
const ROUNDS = Number(option('rounds', quick ? '1' : '3'));
const ALL = ['service', 'service-pglite', 'graphile-worker', 'pg-boss'] as const;
// --baseline REF: the service as it was at git revision REF, on PostgreSQL (and on PGlite if service-pglite runs), beside.
const BASELINE = option('baseline', '');
type ContestantName = (typeof ALL)[number] | 'service@baseline' | 'service-pglite@baseline';
const ONLY = option('only', ALL.join(',')).split(',') as ContestantName[];
if (BASELINE) ONLY.push(...ONLY.filter((n) => n === 'service' || n === 'service-pglite').map((n) => `${n}@baseline` as ContestantName));
const CONDITIONS = option('conditions', 'quiet,busy').split(',') as Condition[];
type Condition = 'quiet' | 'busy';
// The service's drains run per second, as the main bench's do (bench/README.md).
const SCHEDULE = option('schedule', '* * * * * *');
const LATENCY = quick ? { eventsPerSecond: 200, seconds: 3 } : { eventsPerSecond: 1000, seconds: 10 };
// The ceiling's rounds (a warm-up and three): enough to read its pace, without making each round a long one.
const CEILING_REQUESTS = 20_000;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// --profile: each drain's service process writes a V8 CPU profile there (open it in Chrome DevTools).
const profileDir = flag('profile') ? path.join(ROOT, 'bench/results/profiles') : undefined;
const outFile = path.resolve(option('out', path.join(ROOT, 'bench/results/contention.json')));

/** Per delivery, over the drain's window (first receipt seen to the last). */
interface DrainFigures {
  contestant: ContestantName;
  condition: Condition;
  round: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSecond: number;
  /** The 1-minute load average at the drain's start and end. */
  loadAverage: [number, number];
  /** Cores the machine spent on processes not followed here (other work on the machine), over the window. */
  otherCores: number;
  /** CPU µs per delivery. `sender` all its threads (PGlite's database thread too); `service+pg`: sender + postgres. */
  cpuUs: { sender: number; senderMainThread: number; postgres: number; 'sender+postgres': number; postgresServer: number; receiver: number; load: number };
  /** Context switches per delivery, voluntary / involuntary. */
  switches: { sender: [number, number]; senderMainThread: [number, number]; postgres: [number, number]; receiver: [number, number] };
  /** PostgreSQL statements per delivery (transactions, where pg_stat_statements is not loaded), from start to stop. */
  statements: number | null;
  /** pg_stat_statements only: the most frequent statements, calls per 1,000 deliveries. */
  topStatements?: { query: string; per1000: number }[];
  peakRssMb: number;
  extraReceived: number;
}

// ---------------------------------------------------------------- one drain

/** The postmaster's pid of the server at `url`: the parent of a backend. */
async function postmasterPid(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return parentPid(rows[0]!.pid);
  } finally {
    await client.end();
  }
}

function parentPid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function measureDrain(contestant: Contestant, condition: Condition, roundIndex: number, receiver: Receiver, load: CpuLoad, postmaster: number): Promise<DrainFigures> {
  const counter = contestant.database ? await StatementCounter.open(PG_URL, contestant.database) : undefined;
  try {
    await receiver.reset();
    const statementsBefore = await counter?.total();
    const byStatementBefore = await counter?.byStatement();
    if (condition === 'busy') load.start();
    const loadStart = loadAverage();
    let sender;
    let groups: ReturnType<ProcessGroups['stop']>;
    let main: { first: Counters; last: Counters };
    let countAtStart = 0;
    let peak = 0;
    try {
      sender = await contestant.start();
      const senderPid = sender.pid;
      const loadPids = new Set(load.pids);
      const tag = contestant.database ? ` ${contestant.database} ` : undefined;
      const followed = new ProcessGroups((pid, cmdline, comm) => {
        if (pid === senderPid) return 'sender';
        if (pid === receiver.child.pid) return 'receiver';
        if (loadPids.has(pid)) return 'load';
        if (comm !== 'postgres') return undefined;
        if (tag && cmdline.includes(tag)) return 'postgres';
        if (parentPid(pid) === postmaster && !/\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmdline)) return 'postgresServer';
        return 'postgresOther';
      });
      await waitUntil(`${contestant.name}, ${condition}: first receipt`, async () => {
        sender!.check();
        const s = await receiver.stats();
        return s.count > 0;
      }, 120_000);
      countAtStart = (await receiver.stats()).count;
      followed.start();
      const mainFirst = mainThread(senderPid);
      await waitUntil(`${contestant.name}, ${condition}`, async () => {
        sender!.check();
        peak = Math.max(peak, sender!.peakRssMb());
        const s = await receiver.stats();
        return s.count >= DELIVERIES || `${s.count} / ${DELIVERIES} delivered`;
      }, 30 * 60_000);
      groups = followed.stop();
      main = { first: mainFirst, last: mainThread(senderPid) };
      peak = Math.max(peak, sender.peakRssMb());
    } finally {
      await sender?.stop();
      await load.stop();
    }
    const loadEnd = loadAverage();
    const drained = await receiver.stats();
    // The transaction counters are flushed by a backend as it ends: give the stopped sender's backends a moment.
    if (counter?.source === 'pg_stat_database') await sleep(1000);
    const statementsAfter = await counter?.total();
    const byStatement = counter ? statementsBetween(byStatementBefore!, await counter.byStatement()) : [];
    const n = drained.count - countAtStart; // delivered inside the window
    const seconds = (drained.lastAt - drained.firstAt) / 1000;
    const use = (group: string): GroupUse => groups.groups[group] ?? { processes: 0, cpuSeconds: 0, voluntary: 0, involuntary: 0 };
    const us = (cpu: number) => round((cpu * 1e6) / n, 1);
    const per = (count: number) => round(count / n, 3);
    const followedCpu = ['sender', 'receiver', 'load', 'postgres', 'postgresServer', 'postgresOther'].reduce((t, g) => t + use(g).cpuSeconds, 0);
    return {
      contestant: contestant.name as ContestantName,
      condition,
      round: roundIndex,
      deliveries: DELIVERIES,
      seconds: round(seconds, 2),
      deliveriesPerSecond: Math.round(DELIVERIES / seconds),
      loadAverage: [loadStart, loadEnd],
      otherCores: round(Math.max(0, groups.machine.busy - followedCpu + use('postgresOther').cpuSeconds) / groups.seconds, 2),
      cpuUs: {
        sender: us(use('sender').cpuSeconds),
        senderMainThread: us(main.last.cpuSeconds - main.first.cpuSeconds),
        postgres: us(use('postgres').cpuSeconds),
        'sender+postgres': us(use('sender').cpuSeconds + use('postgres').cpuSeconds),
        postgresServer: us(use('postgresServer').cpuSeconds),
        receiver: us(use('receiver').cpuSeconds),
        load: us(use('load').cpuSeconds),
      },
      switches: {
        sender: [per(use('sender').voluntary), per(use('sender').involuntary)],
        senderMainThread: [per(main.last.voluntary - main.first.voluntary), per(main.last.involuntary - main.first.involuntary)],
        postgres: [per(use('postgres').voluntary), per(use('postgres').involuntary)],
        receiver: [per(use('receiver').voluntary), per(use('receiver').involuntary)],
      },
      statements: statementsBefore === undefined ? null : round((statementsAfter! - statementsBefore) / DELIVERIES, 4),
      ...(counter?.source === 'pg_stat_statements' ? { topStatements: top(byStatement) } : {}),
      peakRssMb: peak,
      extraReceived: drained.count - DELIVERIES,
    };
  } finally {
    await counter?.close();
  }
}

function top(statements: StatementCount[]): { query: string; per1000: number }[] {
  return statements.slice(0, 8).map((s) => ({ query: s.query.replace(/\s+/g, ' ').slice(0, 120), per1000: round((s.calls * 1000) / DELIVERIES, 2) }));
}

// ---------------------------------------------------------------- main

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
const load = new CpuLoad();
// The load processes are the bench's: never left behind, however it ends.
process.on('exit', () => load.killNow());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(1));

phase('building the service');
const build = await buildService();
let baselineBuild: ServiceBuild | undefined;
const receiver = await Receiver.start();
const contestants: Contestant[] = [];
try {
  const postmaster = await postmasterPid(PG_URL);
  phase('setting up the contestants');
  if (BASELINE) {
    phase(`building the service at ${BASELINE}`);
    baselineBuild = await buildServiceAt(BASELINE);
  }
  for (const name of ONLY) {
    if (name.startsWith('service')) {
      const cli = name.endsWith('@baseline') ? baselineBuild!.cli : build.cli;
      contestants.push(await ServiceContestant.create({ name, kind: name.startsWith('service-pglite') ? 'pglite' : 'postgres', cli, pgUrl: PG_URL, receiverUrl: receiver.url, schedule: SCHEDULE, profileDir }));
    } else {
      const definition = name === 'graphile-worker' ? graphileWorkerPeer(pkg.devDependencies['graphile-worker']!) : pgBossPeer(pkg.devDependencies['pg-boss']!);
      contestants.push(new PeerContestant(await PeerDatabase.open(definition, PG_URL, `contention_${name.replace(/\W/g, '_')}`), receiver.url, profileDir));
    }
  }
  const drains: DrainFigures[] = [];
  const ceilings: { round: number; condition: Condition; deliveriesPerSecond: number; loadAverage: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const condition of CONDITIONS) {
      // The raw ceiling (no database) in the same condition, for reference.
      if (!flag('no-ceiling')) {
        phase(`round ${r + 1}/${ROUNDS}, ${condition}: the ceiling`);
        if (condition === 'busy') load.start();
        const ceiling = await measureCeiling(receiver.url, Math.min(DELIVERIES, CEILING_REQUESTS)).finally(() => load.stop());
        ceilings.push({ round: r + 1, condition, deliveriesPerSecond: ceiling.deliveriesPerSecond, loadAverage: loadAverage() });
      }
      // Each round starts with another contestant, so none always drains right after the same one.
      const order = contestants.map((_, i) => contestants[(i + r) % contestants.length]!);
      for (const contestant of order) {
        phase(`round ${r + 1}/${ROUNDS}, ${condition}: ${contestant.name}, a backlog of ${DELIVERIES}`);
        await contestant.prepare(DELIVERIES);
        phase(`round ${r + 1}/${ROUNDS}, ${condition}: ${contestant.name} drains ${DELIVERIES}`);
        drains.push(await measureDrain(contestant, condition, r + 1, receiver, load, postmaster));
      }
    }
  }
  // The service's latency under `immediate`, quiet and busy (on PostgreSQL, else the first service contestant).
  const latency: Partial<Record<Condition, Latency & { loadAverage: number }>> = {};
  const service = contestants.find((c): c is ServiceContestant => c instanceof ServiceContestant);
  if (service && !flag('no-latency')) {
    const { service: process_, api } = await service.startService();
    try {
      await api.settings({ deliveryFrequency: 'immediate' });
      for (const condition of CONDITIONS) {
        phase(`${service.name}: latency at ${LATENCY.eventsPerSecond} events/s for ${LATENCY.seconds} s, immediate, ${condition}`);
        if (condition === 'busy') load.start();
        const l = await measureLatency(api, receiver, service.steadyAlert, 'immediate', LATENCY.eventsPerSecond, LATENCY.seconds).finally(() => load.stop());
        latency[condition] = { ...l, loadAverage: loadAverage() };
      }
      await api.settings({ deliveryFrequency: 'none' });
    } finally {
      await api.close();
      await process_.stop();
    }
  }
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, autogroup: autogroup() },
    versions: { service: pkg.version, 'graphile-worker': pkg.devDependencies['graphile-worker'], 'pg-boss': pkg.devDependencies['pg-boss'], pglite: pkg.dependencies['@electric-sql/pglite'] },
    settings: { deliveries: DELIVERIES, rounds: ROUNDS, webhooks: BENCH_WEBHOOKS, loadProcesses: load.processes, schedule: SCHEDULE, latency: LATENCY, pgUrl: PG_URL.replace(/\/\/[^@]*@/, '//') },
    ceilings,
    drains,
    summary: summarise(drains),
    latency,
  };
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
  if (process.stderr.isTTY) process.stderr.write('\n');
  printTable(report.summary, ceilings, latency);
  console.log(`\nfigures written to ${path.relative(process.cwd(), outFile)}`);
} finally {
  await load.stop();
  for (const c of contestants) await c.dispose().catch((err: unknown) => console.error(`could not remove ${c.name}'s database: ${String(err)}`));
  receiver.stop();
  build.dispose();
  baselineBuild?.dispose();
}

/**
 * Whether the kernel groups threads by session when it shares the cores (autogroup): with it on, the busy load (in
 * the bench's session) shares one group's part with the senders, while every PostgreSQL backend (each calls
 * setsid) is a group of its own, out of the load's reach. Recorded beside the figures, which it moves.
 */
function autogroup(): boolean | undefined {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- summary

type Summary = Record<string, Partial<Record<Condition, SummaryRow>>>;
interface SummaryRow {
  rounds: number;
  /** Medians over the rounds. */
  deliveriesPerSecond: number;
  deliveriesPerSecondRounds: number[];
  loadAverage: number;
  otherCores: number;
  cpuUs: DrainFigures['cpuUs'];
  switches: DrainFigures['switches'];
  statements: number | null;
  peakRssMb: number;
}

function medianOf(values: number[], digits = 1): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
  return round(mid, digits);
}

function summarise(all: DrainFigures[]): Summary {
  const summary: Summary = {};
  for (const name of ONLY) {
    for (const condition of CONDITIONS) {
      const d = all.filter((x) => x.contestant === name && x.condition === condition);
      if (d.length === 0) continue;
      const pick = <T>(f: (x: DrainFigures) => T) => d.map(f);
      const medianPair = (f: (x: DrainFigures) => [number, number]): [number, number] => [medianOf(pick((x) => f(x)[0]), 3), medianOf(pick((x) => f(x)[1]), 3)];
      const cpuKeys = Object.keys(d[0]!.cpuUs) as (keyof DrainFigures['cpuUs'])[];
      (summary[name] ??= {})[condition] = {
        rounds: d.length,
        deliveriesPerSecond: median(pick((x) => x.deliveriesPerSecond)),
        deliveriesPerSecondRounds: pick((x) => x.deliveriesPerSecond),
        loadAverage: medianOf(pick((x) => x.loadAverage[1]), 2),
        otherCores: medianOf(pick((x) => x.otherCores), 2),
        cpuUs: Object.fromEntries(cpuKeys.map((k) => [k, medianOf(pick((x) => x.cpuUs[k]))])) as DrainFigures['cpuUs'],
        switches: {
          sender: medianPair((x) => x.switches.sender),
          senderMainThread: medianPair((x) => x.switches.senderMainThread),
          postgres: medianPair((x) => x.switches.postgres),
          receiver: medianPair((x) => x.switches.receiver),
        },
        statements: d[0]!.statements === null ? null : medianOf(pick((x) => x.statements!), 4),
        peakRssMb: Math.max(...pick((x) => x.peakRssMb)),
      };
    }
  }
  return summary;
}

function printTable(summary: Summary, ceilings: { condition: Condition; deliveriesPerSecond: number }[], latency: Partial<Record<Condition, Latency & { loadAverage: number }>>): void {
  const rows: string[][] = [['contestant', 'load', 'deliveries/s (rounds)', 'load avg (other cores)', 'CPU µs/delivery: sender (main), PG, sum', 'stmts/delivery', 'ctx sw/delivery sender (main) vol/invol', 'PG vol/invol', 'peak RSS MB']];
  for (const [name, byCondition] of Object.entries(summary)) {
    for (const condition of CONDITIONS) {
      const s = byCondition[condition];
      if (!s) continue;
      const pair = (p: [number, number]) => `${p[0]}/${p[1]}`;
      rows.push([
        name,
        condition,
        `${s.deliveriesPerSecond} (${s.deliveriesPerSecondRounds.join(', ')})`,
        `${s.loadAverage} (${s.otherCores})`,
        `${s.cpuUs.sender} (${s.cpuUs.senderMainThread}), ${s.cpuUs.postgres}, ${s.cpuUs['sender+postgres']}`,
        s.statements === null ? '—' : String(s.statements),
        `${pair(s.switches.sender)} (${pair(s.switches.senderMainThread)})`,
        pair(s.switches.postgres),
        String(s.peakRssMb),
      ]);
    }
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  console.log(`\nContention bench: ${DELIVERIES} deliveries a drain, ${ROUNDS} round(s), medians (busy: ${load.processes} busy processes beside)\n`);
  for (const row of rows) console.log(row.map((cell, col) => (col < 2 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  for (const condition of CONDITIONS) {
    const c = ceilings.filter((x) => x.condition === condition).map((x) => x.deliveriesPerSecond);
    console.log(`\nceiling (no database), ${condition}: ${median(c)}/s (${c.join(', ')})`);
    const service = summary.service?.[condition] ?? summary['service-pglite']?.[condition];
    const peers = ['graphile-worker', 'pg-boss'].map((p) => summary[p]?.[condition]).filter((p): p is SummaryRow => p !== undefined);
    if (service && peers.length > 0) {
      const fastest = Math.max(...peers.map((p) => p.deliveriesPerSecond));
      const cheapest = Math.min(...peers.map((p) => p.cpuUs['sender+postgres']));
      console.log(`  service drain ÷ the faster peer's: ×${(service.deliveriesPerSecond / fastest).toFixed(2)} (goal ≥ ×1.25)`);
      console.log(`  service CPU per delivery (service + PostgreSQL) ÷ the cheaper peer's: ×${(service.cpuUs['sender+postgres'] / cheapest).toFixed(2)} (goal ≤ ×0.80)`);
    }
    const l = latency[condition];
    if (l) console.log(`  latency under immediate, ${l.eventsPerSecond} events/s: p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms (load avg ${l.loadAverage})`);
  }
}
