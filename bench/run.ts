/**
 * The benchmark harness: `npm run bench [-- --quick | --large] [--db pglite|postgres|both] [--peers] [--out FILE]`.
 * Runs the service and the receiver in processes of their own and measures, on each database: the ceiling
 * (a plain undici client, no database; again beside the main drains), ingest, drain (with the service's peak RSS),
 * the claim with nothing due and the drain with 10,000 webhooks of which 10 are busy, latency (under `immediate`),
 * the drain under `immediate`, cleanup, and a fan-out to 1,000 webhooks; with --peers, graphile-worker sending the
 * same drain, then pg-boss.
 * Writes a table to stdout and the figures to bench/results/latest.json. bench/README.md says how to read them.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { MAX_DELIVERIES_PER_CALL, MAX_WEBHOOKS } from '../src/limits.js';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { CEILING_ROUNDS, measureCeiling } from './lib/ceiling.js';
import { cpuBetween, sampleCpu, type CpuSample, type CpuUse } from './lib/cpu.js';
import { measureLatency, steadyLoad, type Latency } from './lib/latency.js';
import { CLAIM_HISTOGRAM, readHistogram } from './lib/metrics.js';
import { graphileWorkerPeer } from './lib/peers/graphile-worker.js';
import { runPeer, type PeerFigures } from './lib/peers/peer.js';
import { pgBossPeer } from './lib/peers/pg-boss.js';
import { median, phase, progress, round, sleep, waitUntil } from './lib/progress.js';
import { Receiver } from './lib/receiver-client.js';
import { INGEST_CONCURRENCY, MATCHES_PER_CALL, ingestBacklog, prepareServiceDatabase, timedCalls } from './lib/service-database.js';
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
// manyWebhooks: the flat-cost phase's installation (10 busy, the rest idle), whose two drains are of flatDeliveries;
// fanoutWebhooks of those subscribe to the fan-out's source. immediateDrain: the drain again under `immediate`, of
// drainDeliveries beside the first drain (--large leaves it out: another 1,000,000).
const PLAN = {
  quick: { drainDeliveries: 10_000, ceilingRequests: 10_000, latencySeconds: 5, latencyCronSeconds: 3, latencyEventsPerSecond: 500, cleanupRows: 100_000, manyWebhooks: 100, flatDeliveries: 5_000, idleClaimSeconds: 2, fanoutWebhooks: 50, fanoutDeliveries: 20_000, immediateDrain: true },
  default: { drainDeliveries: 100_000, ceilingRequests: 50_000, latencySeconds: 30, latencyCronSeconds: 10, latencyEventsPerSecond: 1000, cleanupRows: 1_000_000, manyWebhooks: MAX_WEBHOOKS, flatDeliveries: 100_000, idleClaimSeconds: 10, fanoutWebhooks: 1000, fanoutDeliveries: 500_000, immediateDrain: true },
  large: { drainDeliveries: 1_000_000, ceilingRequests: 50_000, latencySeconds: 30, latencyCronSeconds: 10, latencyEventsPerSecond: 1000, cleanupRows: 1_000_000, manyWebhooks: MAX_WEBHOOKS, flatDeliveries: 100_000, idleClaimSeconds: 10, fanoutWebhooks: 1000, fanoutDeliveries: 500_000, immediateDrain: false },
}[mode];
const WEBHOOKS = 10;
// Webhook creations at once: each is a POST (creations are serialised in the database by the MAX_WEBHOOKS check).
const CREATE_CONCURRENCY = 8;
const FANOUT_CONCURRENCY = 2;
// The flat-cost phase's rounds: few webhooks, many, few again (the idle ones deleted), many again (created again).
// One pair on its own moved with the machine: ×0.80 and ×0.77 in two runs of 24 November; later that day, rounds of
// one run went from ×0.66 to ×1.09 (bench/HISTORY.md has them).
const FLAT_ROUNDS = 2;
const PER_SECOND = '* * * * * *';
const databases = option('db', 'both') === 'both' ? (['postgres', 'pglite'] as const) : ([option('db', 'both')] as ('postgres' | 'pglite')[]);
// --profile: the drain's service process writes a V8 CPU profile there (open it in Chrome DevTools).
const profileDir = flag('profile') ? path.join(ROOT, 'bench/results/profiles') : undefined;
const outFile = path.resolve(option('out', path.join(ROOT, 'bench/results/latest.json')));
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_PASSWORD = 'bench-admin-password';

// ---------------------------------------------------------------- one database

interface Drain {
  deliveries: number;
  seconds: number;
  deliveriesPerSecond: number;
  ratioToCeiling: number;
  peakRssMb: number;
  deliveryFrequency: string;
  /** Cores used from the first receipt to the last, per process, and the machine's idle cores (see lib/cpu.ts). */
  cpu: CpuUse;
  /** The ceiling measured right before and right after this drain (the main drains only: see besideCeiling). */
  ceilingBeside?: CeilingBeside;
  ratioToCeilingBeside?: number;
}
/** The median of the ceiling's rounds measured right before and right after one drain, and those rounds. */
interface CeilingBeside {
  deliveriesPerSecond: number;
  rounds: number[];
}
/** Claims with nothing due, timed by the service (its claim histogram), over `seconds` of per-second firings. */
interface IdleClaims {
  webhooks: number;
  seconds: number;
  claims: number;
  meanMs: number;
  /**
   * PostgreSQL only: a `SELECT 1` from the harness after the same one-second pause, as often. What any statement
   * costs after an idle second on this machine (waking the processes up), which the claims' mean includes.
   */
  roundTripFloorMs?: number;
}
/** One round of the flat-cost phase: the drain with the few webhooks, then with the many. */
interface FlatRound {
  fewPerSecond: number;
  manyPerSecond: number;
  ratio: number;
}
interface Figures {
  ingest: { events: number; seconds: number; eventsPerSecond: number; deliveriesPerSecond: number };
  drain: Drain;
  /** The flat-cost phase: the drain with `webhooks` webhooks of which 10 busy, and its ratio to the same drain with 11, over FLAT_ROUNDS rounds. */
  manyWebhooks: {
    webhooks: number;
    busyWebhooks: number;
    webhooksCreatedPerSecond: number;
    /** The first round's drains; `ratioToDrain` is over every round (see FLAT_ROUNDS). */
    fewWebhooksDrain: Drain;
    drain: Drain;
    ratioToDrain: number;
    rounds: FlatRound[];
    idleClaimFew?: IdleClaims;
    idleClaimMany?: IdleClaims;
  };
  /** Whether the service took `deliveryFrequency: "immediate"`; if not, the latency phase ran per second. */
  immediate: { supported: boolean; note?: string };
  latency: Latency;
  /** The same load under the per-second schedule, for comparison (run only when `immediate` is supported). */
  latencyPerSecond?: Latency;
  /** The drain under `immediate`, beside the first drain (under the per-second schedule). */
  immediateDrain?: Drain & { ratioToDrain: number };
  cleanup: { rows: number; seconds: number; deliveredDuring: number; maxGapMs: number; deliveryFrequency: string };
  fanout: { webhooks: number; events: number; deliveries: number; matchesPerCall: number; seconds: number; deliveriesPerSecond: number; eventsPerSecond: number };
}

/** A peer's drain, with the ceiling measured beside it. */
type PeerResult = PeerFigures & { ceilingBeside?: CeilingBeside; ratioToCeilingBeside?: number };

/** The service under test and its signed-in admin; `restart` swaps both. */
interface Session {
  service: ServiceProcess;
  api: AdminClient;
}

async function benchDatabase(kind: 'postgres' | 'pglite', receiver: Receiver, ceiling: number): Promise<Figures> {
  const { env: dbEnv, dispose } = await prepareServiceDatabase(kind, PG_URL);
  const env = { ...dbEnv, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' };
  const s: Session = { service: await ServiceProcess.start(build.cli, env), api: undefined as unknown as AdminClient };
  s.api = new AdminClient(s.service.baseUrl);
  const restartService = async (withProfile?: string, whileStopped?: () => Promise<void>) => Object.assign(s, await restart(s.service, s.api, env, withProfile, whileStopped));
  try {
    await s.api.signIn(ADMIN_PASSWORD);
    await s.api.settings({ deliveryFrequency: 'none', cleanupFrequency: 'none' });
    for (const key of ['bench', 'steady', 'idle', 'fanout']) await s.api.call('POST', '/api/admin/sources', { key, name: key });
    const benchAlert = await s.api.call<{ id: number }>('POST', '/api/admin/bench/alerts', { title: 'Shared phone numbers', description: 'Two clients share a phone' });
    const steadyAlert = await s.api.call<{ id: number }>('POST', '/api/admin/steady/alerts', { title: 'Steady load', description: '' });
    const fanoutAlert = await s.api.call<{ id: number }>('POST', '/api/admin/fanout/alerts', { title: 'Fan-out', description: 'Every team is told' });
    for (let i = 0; i < WEBHOOKS; i++) {
      await s.api.call('POST', '/api/admin/webhooks', { url: receiver.url, secret: `bench-webhook-secret-${i}`, events: [{ eventType: 'newCase', sourceKey: 'bench' }] });
    }
    // One webhook for the latency and cleanup phases' steady load.
    await s.api.call('POST', '/api/admin/webhooks', { url: receiver.url, secret: 'steady-webhook-secret', events: [{ eventType: 'newCase', sourceKey: 'steady' }] });
    let webhookCount = WEBHOOKS + 1;

    // Ingest: matches through the API, batches of 100, 10 subscribed webhooks. It builds the drain's backlog.
    phase(`${kind}: ingest`);
    const ingestFigures = await ingest(s.api, benchAlert.id, kind);

    // Drain: a fresh service process (so its peak RSS is the drain's), delivering every second.
    phase(`${kind}: drain of ${PLAN.drainDeliveries} deliveries`);
    await restartService(profileDir);
    const drain = await besideCeiling(receiver, kind, () => measureDrain(s, receiver, PER_SECOND, ceiling, 'drain'));

    // Latency: a steady rate of events delivered under `immediate` (before the service had it, per second);
    // commit → receiver. Then, for comparison, the same load per second.
    const immediate = await trySchedule(s.api, 'immediate');
    const schedule = immediate.supported ? 'immediate' : PER_SECOND;
    phase(`${kind}: latency at ${PLAN.latencyEventsPerSecond} events/s for ${PLAN.latencySeconds} s, deliveryFrequency ${schedule}${immediate.note ? ` (${immediate.note})` : ''}`);
    if (!immediate.supported) await s.api.settings({ deliveryFrequency: PER_SECOND });
    const latency = await measureLatency(s.api, receiver, steadyAlert.id, schedule, PLAN.latencyEventsPerSecond, PLAN.latencySeconds);
    let latencyPerSecond: Latency | undefined;
    let immediateDrain: Figures['immediateDrain'];
    if (immediate.supported) {
      phase(`${kind}: latency at ${PLAN.latencyEventsPerSecond} events/s for ${PLAN.latencyCronSeconds} s, deliveryFrequency ${PER_SECOND}`);
      await s.api.settings({ deliveryFrequency: PER_SECOND });
      latencyPerSecond = await measureLatency(s.api, receiver, steadyAlert.id, PER_SECOND, PLAN.latencyEventsPerSecond, PLAN.latencyCronSeconds);
      if (PLAN.immediateDrain) {
        phase(`${kind}: drain of ${PLAN.drainDeliveries} deliveries under immediate`);
        await s.api.settings({ deliveryFrequency: 'none' });
        await ingest(s.api, benchAlert.id, kind);
        await restartService();
        const d = await measureDrain(s, receiver, 'immediate', ceiling, 'drain, immediate');
        immediateDrain = { ...d, ratioToDrain: round(d.deliveriesPerSecond / drain.deliveriesPerSecond, 3) };
      }
      await s.api.settings({ deliveryFrequency: schedule });
    }

    // Flat cost in the number of webhooks (the phases above keep 11 webhooks; the cleanup and the fan-out have
    // MAX_WEBHOOKS): the drain again with 11 webhooks, then with MAX_WEBHOOKS of which 10 are busy, one after the
    // other, from the same database state, FLAT_ROUNDS times; and a claim with nothing due, timed by the service,
    // with each (the first round). Before the cleanup: on PGlite, the drain just after it ran at 0.6 of the first
    // drain (2,042/s against 3,359/s), the embedded vacuum of its million deleted rows sharing the database's one
    // thread.
    const floorUrl = dbEnv.DATABASE_URL; // PostgreSQL only: the harness cannot reach into the embedded database
    const flatDrain = async (label: string) => {
      phase(`${kind}: drain of ${PLAN.flatDeliveries} deliveries, ${webhookCount} webhooks${label === 'few' ? " (the flat-cost phase's baseline)" : ` of which ${WEBHOOKS} busy`}`);
      await s.api.settings({ deliveryFrequency: 'none' });
      await ingest(s.api, benchAlert.id, kind, PLAN.flatDeliveries);
      await restartService();
      return measureDrain(s, receiver, PER_SECOND, ceiling, `drain, ${label} webhooks`, PLAN.flatDeliveries);
    };
    const fewDrains: Drain[] = [];
    const manyDrains: Drain[] = [];
    let idleClaimFew: IdleClaims | undefined;
    let idleClaimMany: IdleClaims | undefined;
    let webhooksCreatedPerSecond = 0;
    let idleWebhookIds: number[] = [];
    for (let round = 0; round < FLAT_ROUNDS; round++) {
      if (round > 0) {
        phase(`${kind}: deleting the ${idleWebhookIds.length} idle webhooks through the API`);
        await deleteWebhooks(s.api, idleWebhookIds, kind);
        webhookCount -= idleWebhookIds.length;
      }
      fewDrains.push(await flatDrain('few'));
      if (round === 0) {
        phase(`${kind}: claims with nothing due, ${webhookCount} webhooks`);
        idleClaimFew = await idleClaims(s.service, webhookCount, floorUrl);
      }
      phase(`${kind}: creating ${PLAN.manyWebhooks - webhookCount} idle webhooks through the API`);
      const created = await createIdleWebhooks(s.api, receiver.url, PLAN.manyWebhooks - webhookCount, PLAN.fanoutWebhooks, kind);
      idleWebhookIds = created.ids;
      webhookCount += created.ids.length;
      if (round === 0) {
        webhooksCreatedPerSecond = created.perSecond;
        phase(`${kind}: claims with nothing due, ${webhookCount} webhooks`);
        idleClaimMany = await idleClaims(s.service, webhookCount, floorUrl);
      }
      manyDrains.push(await flatDrain('many'));
    }
    const rateOf = (drains: Drain[]) => drains.reduce((n, d) => n + d.deliveries, 0) / drains.reduce((t, d) => t + d.seconds, 0);
    const manyWebhooks: Figures['manyWebhooks'] = {
      webhooks: webhookCount,
      busyWebhooks: WEBHOOKS,
      webhooksCreatedPerSecond,
      fewWebhooksDrain: fewDrains[0]!,
      drain: manyDrains[0]!,
      ratioToDrain: round(rateOf(manyDrains) / rateOf(fewDrains), 3),
      rounds: fewDrains.map((few, i) => ({ fewPerSecond: few.deliveriesPerSecond, manyPerSecond: manyDrains[i]!.deliveriesPerSecond, ratio: round(manyDrains[i]!.deliveriesPerSecond / few.deliveriesPerSecond, 3) })),
      ...(idleClaimFew ? { idleClaimFew } : {}),
      ...(idleClaimMany ? { idleClaimMany } : {}),
    };

    // Cleanup: rows seeded with the service stopped (the embedded database admits one process), then removed
    // by the schedule while a steady load keeps deliveries flowing (under the latency phase's schedule).
    phase(`${kind}: cleanup of ${PLAN.cleanupRows} sent deliveries`);
    await s.api.settings({ deliveryFrequency: schedule });
    await restartService(undefined, () => runTsx(['bench/lib/seed.ts', 'sent', String(PLAN.cleanupRows)], env));
    await receiver.reset();
    const logMark = s.service.logLines.length;
    const cleanupStarted = Date.now();
    await s.api.settings({ cleanupFrequency: PER_SECOND });
    let cleanupLog: Record<string, unknown> | undefined;
    const load = steadyLoad(s.api, steadyAlert.id, 200, 600_000, 'cleanup load', () => cleanupLog !== undefined);
    await waitUntil('cleanup', async () => {
      cleanupLog = s.service.logLines.slice(logMark).find((l) => l.msg === 'old deliveries removed' && Number(l.sent) >= PLAN.cleanupRows);
      return cleanupLog !== undefined || `${Math.round((Date.now() - cleanupStarted) / 1000)} s`;
    }, 10 * 60_000);
    await load;
    await s.api.settings({ cleanupFrequency: 'none' });
    const during = await receiver.stats();
    const cleanup = { rows: PLAN.cleanupRows, seconds: round(Number(cleanupLog!.durationMs) / 1000, 2), deliveredDuring: during.count, maxGapMs: during.maxGapMs, deliveryFrequency: schedule };

    // Fan-out: each event to fanoutWebhooks subscribed webhooks, delivery off; as many matches a call as
    // MAX_DELIVERIES_PER_CALL allows.
    await s.api.settings({ deliveryFrequency: 'none' });
    phase(`${kind}: fan-out of ${PLAN.fanoutDeliveries} deliveries to ${PLAN.fanoutWebhooks} webhooks`);
    const fanout = await measureFanout(s.api, fanoutAlert.id, kind);
    return { ingest: ingestFigures, drain, manyWebhooks, immediate, latency, ...(latencyPerSecond ? { latencyPerSecond } : {}), ...(immediateDrain ? { immediateDrain } : {}), cleanup, fanout };
  } finally {
    await s.api.close();
    await s.service.stop().catch(() => {});
    await dispose();
  }
}

/** Reports a drain's backlog: `deliveries` / 10 new cases (see ingestBacklog in lib/service-database.ts). */
function ingest(api: AdminClient, alertId: number, kind: string, deliveries = PLAN.drainDeliveries) {
  return ingestBacklog(api, alertId, kind, deliveries, WEBHOOKS);
}

/** Sets `deliveryFrequency` to `schedule` and times the backlog's drain at the receiver, first receipt to last. */
async function measureDrain(s: Session, receiver: Receiver, schedule: string, ceiling: number, label: string, deliveries = PLAN.drainDeliveries): Promise<Drain> {
  await receiver.reset();
  await s.api.settings({ deliveryFrequency: schedule });
  // The CPU from the first receipt seen (the receiver is asked every 100 ms) to the last.
  const sample = () => sampleCpu(s.service.child.pid!, receiver.child.pid!);
  let firstSeen: CpuSample | undefined;
  await waitUntil(label, async () => {
    const stats = await receiver.stats();
    if (stats.count > 0) firstSeen ??= sample();
    return stats.count >= deliveries || `${stats.count} / ${deliveries} delivered`;
  }, 30 * 60_000);
  const cpu = cpuBetween(firstSeen!, sample());
  const drained = await receiver.stats();
  const seconds = (drained.lastAt - drained.firstAt) / 1000;
  const rate = Math.round(deliveries / seconds);
  return { deliveries, seconds: round(seconds, 2), deliveriesPerSecond: rate, ratioToCeiling: round(rate / ceiling, 3), peakRssMb: s.service.peakRssMb(), deliveryFrequency: schedule, cpu };
}

/**
 * The service's own timing of its claims (the claim histogram of GET /metrics) over idleClaimSeconds of per-second
 * firings with nothing due: each firing makes one claim, which finds nothing. Undefined if the service has no such metric.
 */
async function idleClaims(service: ServiceProcess, webhooks: number, floorUrl?: string): Promise<IdleClaims | undefined> {
  // After a drain, its last outcomes may still be written: a firing's claim then finds nothing, but wait one out.
  await sleep(1500);
  const before = await readHistogram(service.baseUrl, CLAIM_HISTOGRAM);
  await sleep(PLAN.idleClaimSeconds * 1000);
  const after = await readHistogram(service.baseUrl, CLAIM_HISTOGRAM);
  if (!before || !after) return undefined;
  const claims = after.count - before.count;
  const figures: IdleClaims = { webhooks, seconds: PLAN.idleClaimSeconds, claims, meanMs: claims > 0 ? round(((after.sum - before.sum) / claims) * 1000, 3) : NaN };
  if (floorUrl) figures.roundTripFloorMs = await roundTripFloor(floorUrl, PLAN.idleClaimSeconds);
  return figures;
}

/**
 * The mean time of a `SELECT 1` sent after a one-second pause, `times` times, on a connection of the harness: the
 * least any statement costs the service's per-second firings. Measured here on 24 November, from one process, after
 * a second's pause: `SELECT 1` 1.78 ms, the claim 2.47 ms (median of 10); back to back, 0.10 and 0.24 ms.
 */
async function roundTripFloor(url: string, times: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT 1');
    let total = 0;
    for (let i = 0; i < times; i++) {
      await sleep(1000);
      const started = performance.now();
      await client.query('SELECT 1');
      total += performance.now() - started;
    }
    return round(total / times, 3);
  } finally {
    await client.end();
  }
}

/**
 * Runs `drain` between two measurements of the ceiling (after its service started, before its schedule is set;
 * after it, once its last outcomes are written), and gives its ratio to the median of their rounds too. The run's
 * ceiling is measured once, at its start, and on this shared 2-core machine the ceiling moves within minutes: on
 * 24 November its rounds went from 11,700–13,000/s right before a drain to 26,200–26,800/s right after it, 30 s
 * later, and run-start ceilings of that day ranged from 15,600 to 33,900/s.
 */
async function besideCeiling<T extends { deliveriesPerSecond: number }>(receiver: Receiver, label: string, drain: () => Promise<T>): Promise<T & { ceilingBeside: CeilingBeside; ratioToCeilingBeside: number }> {
  phase(`${label}: the ceiling before the drain`);
  const before = await measureCeiling(receiver.url, PLAN.ceilingRequests);
  const figures = await drain();
  await sleep(1000);
  phase(`${label}: the ceiling after the drain`);
  const after = await measureCeiling(receiver.url, PLAN.ceilingRequests);
  const rounds = [...before.rounds, ...after.rounds];
  const ceiling = median(rounds);
  return { ...figures, ceilingBeside: { deliveriesPerSecond: ceiling, rounds }, ratioToCeilingBeside: round(figures.deliveriesPerSecond / ceiling, 3) };
}

/**
 * Creates `count` webhooks through the API, CREATE_CONCURRENCY at once: the first `fanoutCount` subscribe to the
 * fan-out's source, the others to a source nothing is reported on. Through the API rather than SQL, so the harness
 * depends on no column (the secret is stored sealed). Answers the creations per second.
 */
async function createIdleWebhooks(api: AdminClient, url: string, count: number, fanoutCount: number, kind: string): Promise<{ ids: number[]; perSecond: number }> {
  const ids: number[] = [];
  const seconds = await timedCalls(count, CREATE_CONCURRENCY, async (i) => {
    const sourceKey = i < fanoutCount ? 'fanout' : 'idle';
    const created = await api.call<{ id: number }>('POST', '/api/admin/webhooks', { url, secret: `idle-webhook-secret-${i}`, events: [{ eventType: 'newCase', sourceKey }] });
    ids.push(created.id);
    if (i % 100 === 0) progress(`${kind}: ${i} / ${count} webhooks created`);
  });
  return { ids, perSecond: Math.round(count / seconds) };
}

/** Deletes these webhooks through the API, CREATE_CONCURRENCY at once. */
async function deleteWebhooks(api: AdminClient, ids: readonly number[], kind: string): Promise<void> {
  await timedCalls(ids.length, CREATE_CONCURRENCY, async (i) => {
    await api.call('DELETE', `/api/admin/webhooks/${ids[i]}`);
    if (i % 100 === 0) progress(`${kind}: ${i} / ${ids.length} webhooks deleted`);
  });
}

/**
 * Sets `deliveryFrequency` to `schedule`; answers whether the service took it. A service without it answers 400
 * invalid_parameter (it reads the value as a CRON expression): then the harness falls back to the per-second schedule.
 */
async function trySchedule(api: AdminClient, schedule: string): Promise<{ supported: boolean; note?: string }> {
  try {
    await api.settings({ deliveryFrequency: schedule });
    return { supported: true };
  } catch (err) {
    const message = (err as Error).message;
    if (!/answered 400/.test(message) || !message.includes('invalid_parameter')) throw err;
    return { supported: false, note: `deliveryFrequency "${schedule}" refused by this service (400 invalid_parameter): latency measured per second instead` };
  }
}

/** fanoutDeliveries deliveries created from new cases on the fan-out source, FANOUT_CONCURRENCY calls at once. */
async function measureFanout(api: AdminClient, alertId: number, kind: string): Promise<Figures['fanout']> {
  // As many as one call may create, in at least FANOUT_CONCURRENCY calls.
  const matchesPerCall = Math.min(Math.floor(MAX_DELIVERIES_PER_CALL / PLAN.fanoutWebhooks), Math.ceil(PLAN.fanoutDeliveries / PLAN.fanoutWebhooks / FANOUT_CONCURRENCY));
  const calls = Math.ceil(PLAN.fanoutDeliveries / (matchesPerCall * PLAN.fanoutWebhooks));
  const seconds = await timedCalls(calls, FANOUT_CONCURRENCY, async (call) => {
    const matches = Array.from({ length: matchesPerCall }, (_, i) => ({ nodes: [`f${call}-${i}`] }));
    await api.call('POST', `/api/admin/fanout/alerts/${alertId}/matches`, { matches });
    progress(`${kind}: fan-out ${(call + 1) * matchesPerCall * PLAN.fanoutWebhooks} / ${PLAN.fanoutDeliveries} deliveries`);
  });
  const events = calls * matchesPerCall;
  const deliveries = events * PLAN.fanoutWebhooks;
  return { webhooks: PLAN.fanoutWebhooks, events, deliveries, matchesPerCall, seconds: round(seconds, 2), deliveriesPerSecond: Math.round(deliveries / seconds), eventsPerSecond: Math.round(events / seconds) };
}

/** Stops the service, runs `whileStopped` (the embedded database admits one process), starts it again, signed in. */
async function restart(
  service: ServiceProcess,
  api: AdminClient,
  env: Record<string, string>,
  withProfile?: string,
  whileStopped: () => Promise<void> = async () => {},
): Promise<Session> {
  await api.close();
  await service.stop();
  await whileStopped();
  const started = await ServiceProcess.start(build.cli, env, withProfile);
  const client = new AdminClient(started.baseUrl);
  await client.signIn(ADMIN_PASSWORD);
  return { service: started, api: client };
}

// ---------------------------------------------------------------- main

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
phase('building the service');
const build = await buildService();
const receiver = await Receiver.start();
try {
  phase(`ceiling: a plain undici Pool, a warm-up and ${CEILING_ROUNDS} rounds of ${PLAN.ceilingRequests} signed POSTs`);
  const ceiling = await measureCeiling(receiver.url, PLAN.ceilingRequests);
  const results: Record<string, Figures> = {};
  for (const kind of databases) results[kind] = await benchDatabase(kind, receiver, ceiling.deliveriesPerSecond);
  // The peers on the PostgreSQL server (graphile-worker needs one), after the service is stopped: the same
  // receiver and N, compared with the same ceiling, and with the ceiling beside their drain.
  const peers: Record<string, PeerResult> = {};
  if (flag('peers')) {
    for (const peer of [graphileWorkerPeer(pkg.devDependencies['graphile-worker']!), pgBossPeer(pkg.devDependencies['pg-boss']!)]) {
      peers[peer.name] = await besideCeiling(receiver, 'peers', () => runPeer(peer, { pgUrl: PG_URL, receiver, deliveries: PLAN.drainDeliveries, webhooks: WEBHOOKS, ceiling: ceiling.deliveriesPerSecond }));
    }
  }
  const pgVersion = databases.includes('postgres') || flag('peers') ? await serverVersion() : undefined;
  const report = {
    date: new Date().toISOString(),
    mode,
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`, node: process.version },
    versions: { service: pkg.version, postgres: pgVersion, pglite: pkg.dependencies['@electric-sql/pglite'], undici: pkg.dependencies.undici, fastify: pkg.dependencies.fastify },
    settings: { ...PLAN, webhooks: WEBHOOKS, matchesPerCall: MATCHES_PER_CALL, ingestConcurrency: INGEST_CONCURRENCY, drainDeliveryFrequency: PER_SECOND, latencyWebhooks: 1, createConcurrency: CREATE_CONCURRENCY, fanoutConcurrency: FANOUT_CONCURRENCY },
    ceiling,
    databases: results,
    peers,
  };
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
  if (process.stderr.isTTY) process.stderr.write('\n');
  printTable(report.ceiling, results, peers);
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

function printTable(ceiling: { deliveriesPerSecond: number; rounds: number[] }, results: Record<string, Figures>, peers: Record<string, PeerResult>): void {
  const percent = (value: number) => `${(value * 100).toFixed(0)}%`;
  const ratio = (value: number) => percent(value / ceiling.deliveriesPerSecond);
  // "; 41% beside": the ratio to the ceiling measured right before and after that drain (see besideCeiling).
  const beside = (d: { ratioToCeilingBeside?: number }) => (d.ratioToCeilingBeside === undefined ? '' : `; ${percent(d.ratioToCeilingBeside)} beside`);
  const times = (value: number) => `×${value.toFixed(2)}`;
  const rows: [string, ...string[]][] = [['', ...Object.keys(results)]];
  const add = (label: string, pick: (f: Figures) => string | undefined) => rows.push([label, ...Object.values(results).map((f) => pick(f) ?? '—')]);
  const latency = (l: Latency | undefined) => l && `${l.p50Ms} / ${l.p99Ms}`;
  console.log(
    `\nAlert Webhooks benchmark (${mode}) — ceiling: ${ceiling.deliveriesPerSecond} deliveries/s (plain undici Pool, no database; median of ${CEILING_ROUNDS} rounds, ${Math.min(...ceiling.rounds)}–${Math.max(...ceiling.rounds)})\n`,
  );
  add('ingest events/s', (f) => String(f.ingest.eventsPerSecond));
  add('ingest deliveries created/s', (f) => `${f.ingest.deliveriesPerSecond} (${ratio(f.ingest.deliveriesPerSecond)})`);
  add(`drain deliveries/s (${PLAN.drainDeliveries}, per second)`, (f) => `${f.drain.deliveriesPerSecond} (${ratio(f.drain.deliveriesPerSecond)}${beside(f.drain)})`);
  add('drain peak RSS (MB)', (f) => String(f.drain.peakRssMb));
  // Whether the drain was bound by a core: the service's main thread near 1.0 (busy, or ready and waiting for a core),
  // or the machine without idle cores. PGlite runs inside the service (its thread is in the service's figure): no
  // PostgreSQL server there.
  add('drain CPU, cores: service (main thread + waiting for a core), PostgreSQL, receiver (+ waiting), idle', (f) => {
    const { service, serviceMainThread, serviceMainThreadWaiting, postgres, receiver, receiverWaiting, machineIdle } = f.drain.cpu;
    return `${service} (${serviceMainThread} + ${serviceMainThreadWaiting}), ${f === results.postgres ? postgres : '—'}, ${receiver} (+ ${receiverWaiting}), ${machineIdle}`;
  });
  for (const [name, peer] of Object.entries(peers)) {
    add(`${name} ${peer.version} drain deliveries/s`, (f) => (f === results.postgres ? `${peer.deliveriesPerSecond} (${ratio(peer.deliveriesPerSecond)}${beside(peer)})` : undefined));
    // Raw, and as the two ratios to the ceilings beside each drain (they ran minutes apart).
    const besideTimes = (f: Figures) => (f.drain.ratioToCeilingBeside && peer.ratioToCeilingBeside ? `; ${times(f.drain.ratioToCeilingBeside / peer.ratioToCeilingBeside)} beside` : '');
    add(`service drain ÷ ${name}`, (f) => (f === results.postgres ? `${times(f.drain.deliveriesPerSecond / peer.deliveriesPerSecond)}${besideTimes(f)}` : undefined));
  }
  add(`latency p50 / p99 ms (${PLAN.latencyEventsPerSecond}/s), ${results.postgres?.latency.deliveryFrequency ?? Object.values(results)[0]?.latency.deliveryFrequency}`, (f) => latency(f.latency));
  add(`latency p50 / p99 ms (${PLAN.latencyEventsPerSecond}/s), per second`, (f) => latency(f.latencyPerSecond));
  add('drain under immediate deliveries/s', (f) => f.immediateDrain && `${f.immediateDrain.deliveriesPerSecond} (${times(f.immediateDrain.ratioToDrain)} the drain)`);
  add(`drain, ${PLAN.manyWebhooks} webhooks (${WEBHOOKS} busy) deliveries/s (${PLAN.flatDeliveries})`, (f) => f.manyWebhooks && `${f.manyWebhooks.drain.deliveriesPerSecond} (${times(f.manyWebhooks.ratioToDrain)} 11 webhooks; rounds ${f.manyWebhooks.rounds.map((r) => times(r.ratio)).join(', ')})`);
  add('claim with nothing due (ms), few / many webhooks', (f) => f.manyWebhooks && `${f.manyWebhooks.idleClaimFew?.meanMs ?? '?'} / ${f.manyWebhooks.idleClaimMany?.meanMs ?? '?'}`);
  add('  SELECT 1 after the same pause (ms), few / many', (f) => {
    const [few, many] = [f.manyWebhooks.idleClaimFew?.roundTripFloorMs, f.manyWebhooks.idleClaimMany?.roundTripFloorMs];
    return few === undefined && many === undefined ? undefined : `${few ?? '?'} / ${many ?? '?'}`;
  });
  add(`cleanup of ${PLAN.cleanupRows} rows (s)`, (f) => String(f.cleanup.seconds));
  add('delivered during cleanup (max gap ms)', (f) => `${f.cleanup.deliveredDuring} (${f.cleanup.maxGapMs})`);
  add(`fan-out to ${PLAN.fanoutWebhooks} webhooks: deliveries created/s`, (f) => String(f.fanout.deliveriesPerSecond));
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const row of rows) console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  const notes = Object.entries(results).flatMap(([kind, f]) => (f.immediate.note ? [`${kind}: ${f.immediate.note}`] : []));
  for (const note of [...new Set(notes)]) console.log(`\nnote: ${note}`);
}
