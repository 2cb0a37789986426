/**
 * The operator bench: `npm run bench:operator [-- --quick] [--db postgres|pglite|both] [--out FILE]`. Health over
 * time and the search across webhooks (issue 29) with 1,000,000 deliveries (--quick: 20,000), seeded straight into
 * the database with SQL (bench/lib/operator-seed.ts: a week of them, 20 webhooks), on PostgreSQL (a throwaway database
 * on BENCH_PG_URL's server) and on PGlite (a throwaway DATA_DIR), in this process, through the service's own
 * statements. For each read: the median time of its runs, and what its plan read (deliveries, buffers: figures the
 * machine's load does not move). Beside them, what the write side costs: the outcome statement with and without its
 * counting CTE, and recording events with and without the search's event indexes (time, and WAL bytes on
 * PostgreSQL). Figures go to bench/results/operator-latest.json; bench/README.md ("Health over time and search") says
 * how to read them.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, type Database, type Queryable } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { COUNT_ATTEMPTS_CTE } from '../src/outbox/attempt-counts.js';
import { RECORD_ATTEMPTS_SQL, recordParameters, type AttemptRecord } from '../src/outbox/claims.js';
import { searchStatement, type DeliverySearch } from '../src/outbox/delivery-search.js';
import { READ_COUNTS_SQL, readCountsParameters } from '../src/outbox/health-over-time.js';
import type { HealthRange } from '../src/outbox/schemas.js';
import { seedOperatorData } from './lib/operator-seed.js';
import { phase, progress, round } from './lib/progress.js';
import { onServer as runOnServer } from './lib/service-database.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outFile = path.resolve(option('--out') ?? path.join(ROOT, 'bench/results/operator-latest.json'));
const which = option('--db') ?? 'both';
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PLAN = quick
  ? { deliveries: 20_000, webhooks: 20, runs: 5, outcomeBatches: 4, eventBatches: 4 }
  : { deliveries: 1_000_000, webhooks: 20, runs: 20, outcomeBatches: 20, eventBatches: 20 };
const OUTCOME_BATCH = 256;
const EVENT_BATCH = 1000;
const PAGE = 20;
const loadAverage = () => os.loadavg().map((l) => round(l, 2));
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
};

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/** Median time of `runs` runs (after one to warm the caches), and what one run's plan read. */
async function measure(db: Queryable, sql: string, values: unknown[], runs: number) {
  await db.query(sql, values);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await db.query(sql, values);
    times.push(performance.now() - started);
  }
  const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, values);
  const raw = rows[0]!['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
  const nodes = nodesOf(plan[0].Plan);
  const read = (table: string) =>
    nodes.filter((n) => n['Relation Name'] === table).reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0);
  return {
    medianMs: round(median(times), 2),
    rows: plan[0].Plan['Actual Rows'],
    deliveriesRead: Math.round(read('webhook_deliveries')),
    eventsRead: Math.round(read('webhook_events')),
    buffers: (plan[0].Plan['Shared Hit Blocks'] ?? 0) + (plan[0].Plan['Shared Read Blocks'] ?? 0),
    seqScans: nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
  };
}

const hours = (n: number) => new Date(Date.now() - n * 3_600_000);
const SEARCHES: [string, Partial<DeliverySearch>][] = [
  ['no filter', {}],
  ['delivery id (webhook-id)', { deliveryId: -1 }],
  ['case', { caseId: -1 }],
  ['alert (1 of 40)', { alertId: 7 }],
  ['webhook (1 of 20)', { webhookId: 7 }],
  ['status failed (3%)', { status: 'failed' }],
  ['status pending (0.14%)', { status: 'pending' }],
  ['event type ping (0.1%)', { eventType: 'ping' }],
  ['event type newMatch (70%)', { eventType: 'newMatch' }],
  ['answer 404 (0.75%)', { responseStatus: 404 }],
  ["a webhook's failed", { webhookId: 7, status: 'failed' }],
  ["a webhook's 404s", { webhookId: 7, responseStatus: 404 }],
  ['last hour', { since: hours(1) }],
  ['an hour, 3 days ago', { since: hours(72), until: hours(71) }],
  ['a day, 4 days ago', { since: hours(96), until: hours(72) }],
  ['a webhook, a day ago', { webhookId: 7, since: hours(48), until: hours(24) }],
  ["a webhook's failed, a day ago", { webhookId: 7, status: 'failed', since: hours(48), until: hours(24) }],
  ['an alert, a day ago', { alertId: 7, since: hours(48), until: hours(24) }],
];

async function benchDatabase(kind: 'postgres' | 'pglite') {
  let db: Database;
  let dispose: () => Promise<void>;
  const dbName = `aw_operator_bench_${process.pid}`;
  const onServer = (sql: string) => runOnServer(PG_URL, sql);
  if (kind === 'postgres') {
    await onServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await onServer(`CREATE DATABASE ${dbName}`);
    const url = new URL(PG_URL);
    url.pathname = `/${dbName}`;
    db = await createDatabase({ databaseUrl: url.toString(), dataDir: '' });
    dispose = async () => {
      await db.close();
      await onServer(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    };
  } else {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-operator-bench-'));
    db = await createDatabase({ dataDir });
    dispose = async () => {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  try {
    await migrate(db);
    phase(`${kind}: seeding ${PLAN.deliveries.toLocaleString('en')} deliveries`);
    const seedStarted = performance.now();
    await seedOperatorData(db, { deliveries: PLAN.deliveries, webhooks: PLAN.webhooks, onProgress: (done) => progress(`${kind}: seeded ${done.toLocaleString('en')}`) });
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
    const { rows: picked } = await db.query<{ case_id: number; id: number }>(
      `SELECT e.case_id, d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.case_id IS NOT NULL ORDER BY d.id DESC LIMIT 1 OFFSET $1`,
      [Math.floor(PLAN.deliveries / 3)],
    );

    phase(`${kind}: health over time`);
    const loadBefore = loadAverage();
    const health: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    for (const range of ['hour', 'day', 'week'] as HealthRange[]) {
      for (const webhookId of [null, 7]) health[`${range}, ${webhookId === null ? 'all' : 'one webhook'}`] = await measure(db, READ_COUNTS_SQL, readCountsParameters(range, webhookId), PLAN.runs);
    }
    // What the same day would cost from the deliveries (and it could not tell a retry, nor outlive their retention).
    const fromDeliveries = await measure(
      db,
      `SELECT date_trunc('hour', last_attempt_at) AS hour, count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM webhook_deliveries WHERE last_attempt_at >= now() - interval '1 day' GROUP BY 1`,
      [],
      Math.min(PLAN.runs, 3),
    );

    phase(`${kind}: search`);
    const search: Record<string, { first: Awaited<ReturnType<typeof measure>>; tenth: Awaited<ReturnType<typeof measure>> | null }> = {};
    for (const [name, filters] of SEARCHES) {
      progress(`${kind}: search ${name}`);
      const base: DeliverySearch = {
        limit: PAGE,
        ...filters,
        ...(filters.caseId === -1 ? { caseId: picked[0]!.case_id } : {}),
        ...(filters.deliveryId === -1 ? { deliveryId: picked[0]!.id } : {}),
      };
      const first = searchStatement(base);
      // The tenth page: the cursor after nine pages, found by walking them as a client would.
      let cursor: string | undefined;
      for (let page = 0; page < 9; page++) {
        const { text, values, byTime } = searchStatement({ ...base, cursor });
        const { rows } = await db.query<{ id: number; event_time?: string }>(text, values);
        if (rows.length <= PAGE) {
          cursor = undefined;
          break;
        }
        const last = rows[PAGE - 1]!;
        cursor = byTime ? `${last.event_time}/${last.id}` : String(last.id);
      }
      const tenth = cursor === undefined ? null : searchStatement({ ...base, cursor });
      search[name] = {
        first: await measure(db, first.text, first.values, PLAN.runs),
        tenth: tenth ? await measure(db, tenth.text, tenth.values, PLAN.runs) : null,
      };
    }

    phase(`${kind}: the write side`);
    const writes = { outcomes: await outcomeWriteCost(db, kind), events: await eventWriteCost(db, kind) };
    return { seedSeconds, loadBefore, loadAfter: loadAverage(), health, fromDeliveries, search, writes };
  } finally {
    await dispose();
  }
}

/** WAL bytes written between two calls (PostgreSQL; PGlite answers null: its WAL is not the server's). */
async function walBytes(db: Queryable, kind: string, since?: string): Promise<{ lsn: string; bytes: number | null }> {
  if (kind !== 'postgres') return { lsn: '', bytes: null };
  const { rows } = await db.query<{ lsn: string; bytes: string | null }>(
    `SELECT pg_current_wal_lsn()::text AS lsn, CASE WHEN $1::text = '' THEN NULL ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) END AS bytes`,
    [since ?? ''],
  );
  return { lsn: rows[0]!.lsn, bytes: rows[0]!.bytes === null ? null : Number(rows[0]!.bytes) };
}

/**
 * CPU time so far, in nanoseconds, of what runs the statements: the PostgreSQL backend of `pid` (schedstat: time on a
 * core, whatever else the machine runs), or this process for PGlite (its database thread is one of this process's).
 */
function cpuNs(kind: string, pid: number): number {
  if (kind === 'postgres') return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

/**
 * The outcome statement as the service runs it, and the same without its counting CTE, in turns: batches of 256
 * outcomes (a third each sent, retried, failed) over 20 webhooks, each on claimed deliveries of its own.
 */
async function outcomeWriteCost(db: Database, kind: string) {
  const withoutCounts = RECORD_ATTEMPTS_SQL.replace(`${COUNT_ATTEMPTS_CTE}, `, '');
  if (withoutCounts === RECORD_ATTEMPTS_SQL) throw new Error('the counting CTE was not found in the outcome statement');
  const batches = PLAN.outcomeBatches * 2;
  const { rows: events } = await db.query<{ id: number }>(`INSERT INTO webhook_events (event_type, payload) VALUES ('newCase', '{}') RETURNING id`);
  const { rows: claimed } = await db.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, attempts, lease_token, locked_until)
     SELECT 1 + n % 20, $1, now(), 1, 1, now() + interval '1 hour' FROM generate_series(1, $2::int) n RETURNING id`,
    [events[0]!.id, batches * OUTCOME_BATCH],
  );
  const statuses = ['sent', 'pending', 'failed'] as const;
  const run = { with: { ms: [] as number[], wal: 0, cpuNs: 0 }, without: { ms: [] as number[], wal: 0, cpuNs: 0 } };
  // On one connection, whose backend's CPU is read around each statement.
  await db.withConnection(async (conn) => {
    const pid = kind === 'postgres' ? (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid : 0;
    for (let b = 0; b < batches; b++) {
      const now = Date.now();
      const records: AttemptRecord[] = claimed.slice(b * OUTCOME_BATCH, (b + 1) * OUTCOME_BATCH).map(({ id }, i) => {
        const status = statuses[i % 3]!;
        return {
          id: Number(id),
          leaseToken: 1,
          status,
          nextAttemptAt: status === 'pending' ? now + 60_000 : null,
          attemptedAt: now,
          responseStatus: status === 'sent' ? 204 : 500,
          error: status === 'sent' ? null : 'receiver answered 500',
          logEntry: { attemptedAt: new Date(now).toISOString(), url: 'http://127.0.0.1:9/bench', durationMs: 3 + (i % 300) },
        };
      });
      const variant = b % 2 === 0 ? run.with : run.without;
      const before = await walBytes(conn, kind);
      const cpuBefore = cpuNs(kind, pid);
      const started = performance.now();
      await conn.query(b % 2 === 0 ? RECORD_ATTEMPTS_SQL : withoutCounts, recordParameters(records, 0));
      variant.ms.push(performance.now() - started);
      variant.cpuNs += cpuNs(kind, pid) - cpuBefore;
      variant.wal += (await walBytes(conn, kind, before.lsn)).bytes ?? 0;
    }
  });
  const per = (v: { ms: number[]; wal: number; cpuNs: number }) => ({
    medianBatchMs: round(median(v.ms), 2),
    microsecondsPerOutcome: round((median(v.ms) * 1000) / OUTCOME_BATCH, 1),
    cpuMicrosecondsPerOutcome: round(v.cpuNs / 1000 / (v.ms.length * OUTCOME_BATCH), 1),
    walBytesPerOutcome: kind === 'postgres' ? round(v.wal / (v.ms.length * OUTCOME_BATCH), 1) : null,
  });
  return { batch: OUTCOME_BATCH, batches: PLAN.outcomeBatches, withCounts: per(run.with), withoutCounts: per(run.without) };
}

/** Events recorded as enqueueEvents writes them (a batch of 1,000, one delivery each), with and without the search's event indexes. */
const EVENT_INDEXES = ['webhook_events_case', 'webhook_events_created'];
async function eventWriteCost(db: Database, kind: string) {
  const { rows: definitions } = await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = ANY($1::text[])`, [EVENT_INDEXES]);
  const insert = async (conn: Queryable, pid: number) => {
    const before = await walBytes(conn, kind);
    const cpuBefore = cpuNs(kind, pid);
    const started = performance.now();
    await conn.query(
      `WITH e AS (
         INSERT INTO webhook_events (event_type, payload, alert_id, case_id)
         SELECT 'newCase', '{"eventType":"newCase","sourceKey":"bench","data":{"alert":{"id":' || (g % 40) || '},"case":{"id":' || g || '}}}', g % 40, g
         FROM generate_series(1, $1::int) g RETURNING id
       )
       INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at) SELECT 1, id, now() FROM e`,
      [EVENT_BATCH],
    );
    const ms = performance.now() - started;
    return { ms, cpuNs: cpuNs(kind, pid) - cpuBefore, wal: (await walBytes(conn, kind, before.lsn)).bytes ?? 0 };
  };
  const measureInserts = () =>
    db.withConnection(async (conn) => {
      const pid = kind === 'postgres' ? (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid : 0;
      const runs = [];
      for (let i = 0; i < PLAN.eventBatches; i++) runs.push(await insert(conn, pid));
      return {
        microsecondsPerEvent: round((median(runs.map((r) => r.ms)) * 1000) / EVENT_BATCH, 1),
        cpuMicrosecondsPerEvent: round(runs.reduce((s, r) => s + r.cpuNs, 0) / 1000 / (runs.length * EVENT_BATCH), 1),
        walBytesPerEvent: kind === 'postgres' ? round(runs.reduce((s, r) => s + r.wal, 0) / (runs.length * EVENT_BATCH), 1) : null,
      };
    });
  const withIndexes = await measureInserts();
  for (const name of EVENT_INDEXES) await db.query(`DROP INDEX ${name}`);
  const withoutIndexes = await measureInserts();
  for (const { indexdef } of definitions) await db.query(indexdef);
  return { batch: EVENT_BATCH, batches: PLAN.eventBatches, withIndexes, withoutIndexes };
}

const report: Record<string, unknown> = {
  mode: quick ? 'quick' : 'full',
  startedAt: new Date().toISOString(),
  machine: { cpus: os.cpus().length, memoryGb: round(os.totalmem() / 2 ** 30, 1), node: process.version },
  plan: PLAN,
  databases: {} as Record<string, unknown>,
};
for (const kind of which === 'both' ? (['postgres', 'pglite'] as const) : [which as 'postgres' | 'pglite']) {
  (report.databases as Record<string, unknown>)[kind] = await benchDatabase(kind);
}
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
phase(`written to ${path.relative(process.cwd(), outFile)}`);

// The tables, for the README.
for (const [kind, figures] of Object.entries(report.databases as Record<string, Awaited<ReturnType<typeof benchDatabase>>>)) {
  console.log(`\n${kind} (seeded in ${figures.seedSeconds} s; load average ${figures.loadBefore.join(' ')} → ${figures.loadAfter.join(' ')})`);
  console.log('| health read | median ms | count rows read | buffers |\n|---|---|---|---|');
  for (const [name, m] of Object.entries(figures.health)) console.log(`| ${name} | ${m.medianMs} | ${m.rows} | ${m.buffers} |`);
  console.log(`| the last day from the deliveries (for comparison) | ${figures.fromDeliveries.medianMs} | ${figures.fromDeliveries.deliveriesRead} deliveries | ${figures.fromDeliveries.buffers} |`);
  console.log('| search | page 1: ms, deliveries read, buffers | page 10: ms, deliveries read, buffers |\n|---|---|---|');
  const cell = (m: Awaited<ReturnType<typeof measure>> | null) => (m ? `${m.medianMs} ms, ${m.deliveriesRead}, ${m.buffers}${m.seqScans.length ? ` (seq scan: ${m.seqScans.join(', ')})` : ''}` : '—');
  for (const [name, m] of Object.entries(figures.search)) console.log(`| ${name} | ${cell(m.first)} | ${cell(m.tenth)} |`);
  console.log(`outcomes: ${JSON.stringify(figures.writes.outcomes)}`);
  console.log(`events: ${JSON.stringify(figures.writes.events)}`);
}
