/**
 * The benchmark harness: `npm run bench [-- --quick | --large] [--db pglite|postgres|both] [--out FILE]`.
 * Runs the service and the receiver in processes of their own and measures, on each database: the ceiling
 * (a plain undici client, no database), ingest, drain (with the service's peak RSS), latency, and cleanup.
 * Writes a table to stdout and the figures to bench/results/latest.json. bench/README.md says how to read them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { CEILING_ROUNDS, measureCeiling } from './lib/ceiling.js';
import type { ReceiverStats } from './lib/receiver.js';
import { ServiceProcess } from './lib/service.js';
import { runTsx } from './lib/tsx.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};

const mode = flag('quick') ? 'quick' : flag('large') ? 'large' : 'default';
const PLAN = {
  quick: { drainDeliveries: 10_000, ceilingRequests: 10_000, latencySeconds: 5, latencyEventsPerSecond: 500, cleanupRows: 100_000 },
  default: { drainDeliveries: 100_000, ceilingRequests: 50_000, latencySeconds: 30, latencyEventsPerSecond: 1000, cleanupRows: 1_000_000 },
  large: { drainDeliveries: 1_000_000, ceilingRequests: 50_000, latencySeconds: 30, latencyEventsPerSecond: 1000, cleanupRows: 1_000_000 },
}[mode];
const WEBHOOKS = 10;
const MATCHES_PER_CALL = 100;
const INGEST_CONCURRENCY = 4;
const databases = option('db', 'both') === 'both' ? (['postgres', 'pglite'] as const) : ([option('db', 'both')] as ('postgres' | 'pglite')[]);
// --profile: the drain's service process writes a V8 CPU profile there (open it in Chrome DevTools).
const profileDir = flag('profile') ? path.join(ROOT, 'bench/results/profiles') : undefined;
const outFile = path.resolve(option('out', path.join(ROOT, 'bench/results/latest.json')));
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_PASSWORD = 'bench-admin-password';

// ---------------------------------------------------------------- progress

const startedAt = Date.now();
let lastProgress = 0;
function progress(text: string, force = false): void {
  const line = `[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${text}`;
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
  else if (force || Date.now() - lastProgress > 5000) {
    process.stderr.write(`${line}\n`);
    lastProgress = Date.now();
  }
}
function phase(text: string): void {
  if (process.stderr.isTTY) process.stderr.write('\n');
  progress(text, true);
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => Promise<boolean | string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await check();
    if (state === true) return;
    if (typeof state === 'string') progress(`${what}: ${state}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${typeof state === 'string' ? ` (${state})` : ''}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------- receiver

class Receiver {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}
  static async start(): Promise<Receiver> {
    const child = fork(path.join(ROOT, 'bench/lib/receiver.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
    return new Receiver(child, `http://127.0.0.1:${port}/hook`);
  }
  #ask<T>(message: object, answer: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (m: { type: string } & T) => {
        if (m.type !== answer) return;
        this.child.off('message', onMessage);
        resolve(m);
      };
      this.child.on('message', onMessage);
      this.child.send(message);
    });
  }
  reset(measureLatency = false): Promise<unknown> {
    return this.#ask({ type: 'reset', measureLatency }, 'reset-done');
  }
  async stats(): Promise<ReceiverStats> {
    return (await this.#ask<{ stats: ReceiverStats }>({ type: 'stats' }, 'stats')).stats;
  }
  stop(): void {
    this.child.send({ type: 'stop' });
  }
}

// ---------------------------------------------------------------- one database

interface Figures {
  ingest: { events: number; seconds: number; eventsPerSecond: number; deliveriesPerSecond: number };
  drain: { deliveries: number; seconds: number; deliveriesPerSecond: number; ratioToCeiling: number; peakRssMb: number };
  latency: { eventsPerSecond: number; seconds: number; events: number; received: number; p50Ms: number; p99Ms: number; maxMs: number };
  cleanup: { rows: number; seconds: number; deliveredDuring: number; maxGapMs: number };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function prepareDatabase(kind: 'postgres' | 'pglite'): Promise<{ env: Record<string, string>; dispose: () => Promise<void> }> {
  if (kind === 'postgres') {
    const name = `aw_bench_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString() },
      dispose: async () => {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-bench-'));
  return { env: { DATA_DIR: dataDir }, dispose: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

async function benchDatabase(kind: 'postgres' | 'pglite', receiver: Receiver, ceiling: number): Promise<Figures> {
  const { env: dbEnv, dispose } = await prepareDatabase(kind);
  const env = { ...dbEnv, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' };
  let service = await ServiceProcess.start(build.cli, env);
  let api = new AdminClient(service.baseUrl);
  try {
    await api.signIn(ADMIN_PASSWORD);
    await api.settings({ deliveryFrequency: 'none', cleanupFrequency: 'none' });
    for (const key of ['bench', 'steady']) await api.call('POST', '/api/admin/sources', { key, name: key });
    const benchAlert = await api.call<{ id: number }>('POST', '/api/admin/bench/alerts', { title: 'Shared phone numbers', description: 'Two clients share a phone' });
    const steadyAlert = await api.call<{ id: number }>('POST', '/api/admin/steady/alerts', { title: 'Steady load', description: '' });
    for (let i = 0; i < WEBHOOKS; i++) {
      await api.call('POST', '/api/admin/webhooks', { url: receiver.url, secret: `bench-webhook-secret-${i}`, events: [{ eventType: 'newCase', sourceKey: 'bench' }] });
    }
    // One webhook for the latency and cleanup phases' steady load.
    await api.call('POST', '/api/admin/webhooks', { url: receiver.url, secret: 'steady-webhook-secret', events: [{ eventType: 'newCase', sourceKey: 'steady' }] });

    // Ingest: matches through the API, batches of 100, 10 subscribed webhooks. It builds the drain's backlog.
    phase(`${kind}: ingest`);
    const events = PLAN.drainDeliveries / WEBHOOKS;
    const calls = events / MATCHES_PER_CALL;
    let nextCall = 0;
    const ingestStarted = performance.now();
    await Promise.all(
      Array.from({ length: INGEST_CONCURRENCY }, async () => {
        while (nextCall < calls) {
          const call = nextCall++;
          const matches = Array.from({ length: MATCHES_PER_CALL }, (_, i) => ({ nodes: [`n${call}-${i}`, `m${call}-${i}`], edges: [`e${call}-${i}`] }));
          await api.call('POST', `/api/admin/bench/alerts/${benchAlert.id}/matches`, { matches });
          progress(`${kind}: ingest ${(call + 1) * MATCHES_PER_CALL} / ${events} events`);
        }
      }),
    );
    const ingestSeconds = (performance.now() - ingestStarted) / 1000;
    const ingest = { events, seconds: round(ingestSeconds, 2), eventsPerSecond: Math.round(events / ingestSeconds), deliveriesPerSecond: Math.round((events * WEBHOOKS) / ingestSeconds) };

    // Drain: a fresh service process (so its peak RSS is the drain's), delivering every second.
    phase(`${kind}: drain of ${PLAN.drainDeliveries} deliveries`);
    ({ service, api } = await restart(service, api, env, profileDir));
    await receiver.reset();
    await api.settings({ deliveryFrequency: '* * * * * *' });
    await waitUntil('drain', async () => {
      const s = await receiver.stats();
      return s.count >= PLAN.drainDeliveries || `${s.count} / ${PLAN.drainDeliveries} delivered`;
    }, 30 * 60_000);
    const drained = await receiver.stats();
    const drainSeconds = (drained.lastAt - drained.firstAt) / 1000;
    const drainRate = Math.round(PLAN.drainDeliveries / drainSeconds);
    const drain = { deliveries: PLAN.drainDeliveries, seconds: round(drainSeconds, 2), deliveriesPerSecond: drainRate, ratioToCeiling: round(drainRate / ceiling, 3), peakRssMb: service.peakRssMb() };

    // Latency: a steady rate of events, each delivered on the per-second schedule; commit → receiver.
    phase(`${kind}: latency at ${PLAN.latencyEventsPerSecond} events/s for ${PLAN.latencySeconds} s`);
    await receiver.reset(true);
    const sent = await steadyLoad(api, steadyAlert.id, PLAN.latencyEventsPerSecond, PLAN.latencySeconds * 1000, 'latency');
    await waitUntil('latency deliveries', async () => {
      const s = await receiver.stats();
      return s.count >= sent || `${s.count} / ${sent} received`;
    }, 120_000);
    const latencies = (await receiver.stats()).latencies.sort((a, b) => a - b);
    const latency = {
      eventsPerSecond: PLAN.latencyEventsPerSecond,
      seconds: PLAN.latencySeconds,
      events: sent,
      received: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1) ?? NaN,
    };

    // Cleanup: rows seeded with the service stopped (the embedded database admits one process), then removed
    // by the schedule while a steady load keeps deliveries flowing.
    phase(`${kind}: cleanup of ${PLAN.cleanupRows} sent deliveries`);
    ({ service, api } = await restart(service, api, env, undefined, () => runTsx(['bench/lib/seed.ts', 'sent', String(PLAN.cleanupRows)], env)));
    await receiver.reset();
    const logMark = service.logLines.length;
    const cleanupStarted = Date.now();
    await api.settings({ cleanupFrequency: '* * * * * *' });
    let cleanupLog: Record<string, unknown> | undefined;
    const load = steadyLoad(api, steadyAlert.id, 200, 600_000, 'cleanup load', () => cleanupLog !== undefined);
    await waitUntil('cleanup', async () => {
      cleanupLog = service.logLines.slice(logMark).find((l) => l.msg === 'old deliveries removed' && Number(l.sent) >= PLAN.cleanupRows);
      return cleanupLog !== undefined || `${Math.round((Date.now() - cleanupStarted) / 1000)} s`;
    }, 10 * 60_000);
    await load;
    await api.settings({ cleanupFrequency: 'none' });
    const during = await receiver.stats();
    const cleanup = { rows: PLAN.cleanupRows, seconds: round(Number(cleanupLog!.durationMs) / 1000, 2), deliveredDuring: during.count, maxGapMs: during.maxGapMs };
    return { ingest, drain, latency, cleanup };
  } finally {
    await api.close();
    await service.stop().catch(() => {});
    await dispose();
  }
}

/** Stops the service, runs `whileStopped` (the embedded database admits one process), starts it again, signed in. */
async function restart(
  service: ServiceProcess,
  api: AdminClient,
  env: Record<string, string>,
  profileDir?: string,
  whileStopped: () => Promise<void> = async () => {},
): Promise<{ service: ServiceProcess; api: AdminClient }> {
  await api.close();
  await service.stop();
  await whileStopped();
  const started = await ServiceProcess.start(build.cli, env, profileDir);
  const client = new AdminClient(started.baseUrl);
  await client.signIn(ADMIN_PASSWORD);
  return { service: started, api: client };
}

/** Reports matches for `eventsPerSecond` new cases, in calls every 100 ms, for `durationMs` (or until `stop`). */
async function steadyLoad(api: AdminClient, alertId: number, eventsPerSecond: number, durationMs: number, label: string, stop = () => false): Promise<number> {
  const perTick = Math.max(1, Math.round(eventsPerSecond / 10));
  const started = Date.now();
  let sent = 0;
  for (let tick = 0; Date.now() - started < durationMs && !stop(); tick++) {
    const matches = Array.from({ length: perTick }, (_, i) => ({ nodes: [`${label}-${started}-${tick}-${i}`] }));
    await api.call('POST', `/api/admin/steady/alerts/${alertId}/matches`, { matches });
    sent += perTick;
    progress(`${label}: ${sent} events`);
    const wait = started + (tick + 1) * 100 - Date.now();
    if (wait > 0) await sleep(wait);
  }
  return sent;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

// ---------------------------------------------------------------- main

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
phase('building the service');
const build = await buildService();
const receiver = await Receiver.start();
try {
  phase(`ceiling: a plain undici Pool, a warm-up and ${CEILING_ROUNDS} rounds of ${PLAN.ceilingRequests} signed POSTs`);
  const ceiling = await measureCeiling(receiver.url, PLAN.ceilingRequests);
  const results: Record<string, Figures> = {};
  for (const kind of databases) results[kind] = await benchDatabase(kind, receiver, ceiling.deliveriesPerSecond);
  const pgVersion = databases.includes('postgres') ? await serverVersion() : undefined;
  const report = {
    date: new Date().toISOString(),
    mode,
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`, node: process.version },
    versions: { service: pkg.version, postgres: pgVersion, pglite: pkg.dependencies['@electric-sql/pglite'], undici: pkg.dependencies.undici, fastify: pkg.dependencies.fastify },
    settings: { ...PLAN, webhooks: WEBHOOKS, matchesPerCall: MATCHES_PER_CALL, ingestConcurrency: INGEST_CONCURRENCY, deliveryFrequency: '* * * * * *', latencyWebhooks: 1 },
    ceiling,
    databases: results,
  };
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
  if (process.stderr.isTTY) process.stderr.write('\n');
  printTable(report.ceiling.deliveriesPerSecond, results);
  console.log(`\nfigures written to ${path.relative(process.cwd(), outFile)}`);
} finally {
  receiver.stop();
  build.dispose();
}

async function serverVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
  await client.end();
  return rows[0]!.server_version;
}

function printTable(ceiling: number, results: Record<string, Figures>): void {
  const ratio = (value: number) => `${((value / ceiling) * 100).toFixed(0)}%`;
  const rows: [string, ...string[]][] = [['', ...Object.keys(results)]];
  const add = (label: string, pick: (f: Figures) => string) => rows.push([label, ...Object.values(results).map(pick)]);
  console.log(`\nAlert Webhooks benchmark (${mode}) — ceiling: ${ceiling} deliveries/s (plain undici Pool, no database; median of ${CEILING_ROUNDS} rounds)\n`);
  add('ingest events/s', (f) => String(f.ingest.eventsPerSecond));
  add('ingest deliveries created/s', (f) => `${f.ingest.deliveriesPerSecond} (${ratio(f.ingest.deliveriesPerSecond)})`);
  add(`drain deliveries/s (${PLAN.drainDeliveries})`, (f) => `${f.drain.deliveriesPerSecond} (${ratio(f.drain.deliveriesPerSecond)})`);
  add('drain peak RSS (MB)', (f) => String(f.drain.peakRssMb));
  add(`latency p50 / p99 ms (${PLAN.latencyEventsPerSecond}/s)`, (f) => `${f.latency.p50Ms} / ${f.latency.p99Ms}`);
  add(`cleanup of ${PLAN.cleanupRows} rows (s)`, (f) => String(f.cleanup.seconds));
  add('delivered during cleanup (max gap ms)', (f) => `${f.cleanup.deliveredDuring} (${f.cleanup.maxGapMs})`);
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const row of rows) console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
}
