/**
 * The case inbox bench: `npm run bench:inbox [-- --quick] [--db postgres|pglite|both] [--runs N] [--out FILE]`.
 * GET /api/cases (issue 40) among 1,000,000 cases (--quick: 20,000) of 100 alerts on 4 data sources, seeded with SQL
 * (bench/lib/inbox-seed.ts), on PostgreSQL (a throwaway database on BENCH_PG_URL's server) and on PGlite (a throwaway
 * DATA_DIR), in this process, through the route's own code (parseInboxQuery → inboxSearchOf → readInboxPage), as an
 * Analyst and as a custom group's member. For each page: p50 and p95 of its runs, the plan it was read with and what
 * that plan read (cases, buffers: figures the machine's load does not move). Beside them, what the inbox's indexes
 * cost the writes: new cases, and cases given a new match, with and without them. Figures go to
 * bench/results/inbox-latest.json; bench/README.md ("Case inbox") says how to read them.
 *
 * The run is bounded: each database's measurements stop at its share of --budget-s (default 900 s), the figures so
 * far kept and the pages left out listed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstPlan, inboxSearchOf, inboxStatement, parseInboxQuery, readInboxPage, type InboxPlan, type InboxSearch } from '../src/alerts/case-inbox.js';
import { ANALYST_GROUP_ID } from '../src/auth/groups.js';
import type { Principal } from '../src/auth/principal.js';
import { createDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { seedInbox, withoutSecondaryIndexes, type InboxSeed } from './lib/inbox-seed.js';
import { percentile, phase, progress, round } from './lib/progress.js';
import { onServer } from './lib/service-database.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outFile = path.resolve(option('--out') ?? path.join(ROOT, 'bench/results/inbox-latest.json'));
const which = option('--db') ?? 'both';
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PLAN = quick
  ? { cases: 20_000, alerts: 100, sources: 4, users: 20, runs: Number(option('--runs') ?? 5), writeBatch: 1_000 }
  : { cases: 1_000_000, alerts: 100, sources: 4, users: 20, runs: Number(option('--runs') ?? 40), writeBatch: 10_000 };
const budgetMs = Number(option('--budget-s') ?? (quick ? 300 : 900)) * 1000;
const PUBLIC_BASE_URL = 'https://lke.example.com';
const loadAverage = () => os.loadavg().map((l) => round(l, 2));
const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

/** The member's group: 5 of the 25 alerts of the second source (a team's alerts: 5% of the cases). */
const MEMBER_ALERTS = 5;

interface Page {
  who: 'analyst' | 'member';
  name: string;
  query: Record<string, string | number>;
  /** Pages to walk before the one measured (the cursor after them). */
  skip?: number;
}

function pages(seed: InboxSeed): Page[] {
  const alert = seed.alertIds[0]![7]!;
  return [
    { who: 'analyst', name: 'every case', query: {} },
    { who: 'analyst', name: 'every case, page 10', query: {}, skip: 9 },
    { who: 'analyst', name: 'open (unconfirmed, in-progress)', query: { status: 'unconfirmed,in-progress' } },
    { who: 'analyst', name: 'my open cases', query: { assignee: 'me', status: 'unconfirmed,in-progress' } },
    { who: 'analyst', name: 'unassigned open cases', query: { assignee: 'none', status: 'unconfirmed,in-progress' } },
    { who: 'analyst', name: 'one source (25 alerts)', query: { sourceKey: seed.sourceKeys[2]! } },
    { who: 'analyst', name: "one alert's confirmed cases", query: { alertId: alert, status: 'confirmed' } },
    { who: 'analyst', name: 'updated in the last 7 days', query: { updatedFrom: day(7) } },
    { who: 'analyst', name: 'created in the last 30 days, by creation', query: { createdFrom: day(30), sort: 'createdAt' } },
    { who: 'analyst', name: 'created in the last 30 days, by update', query: { createdFrom: day(30) } },
    { who: 'analyst', name: 'by id, oldest first', query: { sort: 'id', direction: 'asc' } },
    { who: 'analyst', name: 'a page of 200', query: { limit: 200 } },
    { who: 'analyst', name: "one alert's column: country (1 in 4)", query: { alertId: alert, 'column.country': 'FR' } },
    { who: 'analyst', name: "one alert's column: amount (1 in 1,000)", query: { alertId: alert, 'column.amount': 7 } },
    { who: 'analyst', name: 'created in a month 6 months ago, by update', query: { createdFrom: day(180), createdTo: day(150) } },
    { who: 'member', name: 'every case of the group', query: {} },
    { who: 'member', name: 'every case of the group, page 10', query: {}, skip: 9 },
    { who: 'member', name: 'open', query: { status: 'unconfirmed,in-progress' } },
    { who: 'member', name: 'confirmed', query: { status: 'confirmed' } },
    { who: 'member', name: 'unassigned, by creation, oldest first', query: { assignee: 'none', sort: 'createdAt', direction: 'asc' } },
    { who: 'member', name: 'updated in the last 7 days', query: { updatedFrom: day(7) } },
  ];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/** What the statement of `plan` read: cases (of any index), buffers, the indexes and any table scanned. */
async function explain(db: Database, search: InboxSearch, plan: InboxPlan) {
  const { text, values } = inboxStatement(search, plan);
  const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
  const raw = rows[0]!['QUERY PLAN'];
  const root = ((typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }])[0].Plan;
  const nodes = nodesOf(root);
  return {
    rows: root['Actual Rows'],
    casesRead: Math.round(nodes.filter((n) => n['Relation Name'] === 'cases').reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0)),
    buffers: (root['Shared Hit Blocks'] ?? 0) + (root['Shared Read Blocks'] ?? 0),
    indexes: [...new Set(nodes.map((n) => n['Index Name']).filter((name): name is string => Boolean(name) && name!.startsWith('cases')))],
    seqScans: nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
  };
}

async function benchDatabase(kind: 'postgres' | 'pglite', deadline: number) {
  let db: Database;
  let dispose: () => Promise<void>;
  const dbName = `aw_inbox_bench_${process.pid}`;
  if (kind === 'postgres') {
    await onServer(PG_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`, `CREATE DATABASE ${dbName}`);
    const url = new URL(PG_URL);
    url.pathname = `/${dbName}`;
    db = await createDatabase({ databaseUrl: url.toString(), dataDir: '' });
    dispose = async () => {
      await db.close();
      await onServer(PG_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    };
  } else {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-inbox-bench-'));
    db = await createDatabase({ dataDir });
    dispose = async () => {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  try {
    await migrate(db);
    phase(`${kind}: seeding ${PLAN.cases.toLocaleString('en')} cases`);
    const seedStarted = performance.now();
    const rebuild = await withoutSecondaryIndexes(db, ['cases', 'alert_matches']);
    const seed = await seedInbox(db, { ...PLAN, onProgress: (done) => progress(`${kind}: seeded ${done.toLocaleString('en')} cases`) });
    phase(`${kind}: building the indexes`);
    await rebuild();
    await db.query('VACUUM ANALYZE cases');
    await db.query('VACUUM ANALYZE alert_matches');
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);

    // The Analyst is one of the seeded users (10% of the cases are assigned to one of 20): their own cases exist.
    const analystId = seed.userIds[3]!;
    await db.query('INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2)', [analystId, ANALYST_GROUP_ID]);
    const memberId = seed.userIds[5]!;
    const { rows: group } = await db.query<{ id: number }>(`INSERT INTO groups (name, builtin, source_key) VALUES ('bench team', false, $1) RETURNING id`, [seed.sourceKeys[1]]);
    const groupId = group[0]!.id;
    await db.query('INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2)', [memberId, groupId]);
    await db.query(
      `INSERT INTO group_access_rights (group_id, target_type, target_item_type, target_name, type) SELECT $1, 'alert', '', a::text, 'read' FROM unnest($2::int[]) a`,
      [groupId, seed.alertIds[1]!.slice(0, MEMBER_ALERTS)],
    );
    const principals: Record<Page['who'], Principal> = {
      analyst: { userId: analystId, username: 'bench analyst', email: 'analyst@example.com', groupIds: [ANALYST_GROUP_ID], via: 'session' },
      member: { userId: memberId, username: 'bench member', email: 'member@example.com', groupIds: [groupId], via: 'session' },
    };

    phase(`${kind}: pages`);
    const loadBefore = loadAverage();
    const measured: Record<string, unknown> = {};
    const skipped: string[] = [];
    for (const page of pages(seed)) {
      const label = `${page.who}: ${page.name}`;
      if (Date.now() > deadline) {
        skipped.push(label);
        continue;
      }
      progress(`${kind}: ${label}`);
      const principal = principals[page.who];
      const text = Object.fromEntries(Object.entries(page.query).map(([k, v]) => [k, k === 'alertId' || k === 'limit' ? Number(v) : String(v)]));
      // As the route reads it: the caller's scope and filters resolved on every request.
      const search = async (cursor?: string) => inboxSearchOf(db, principal, parseInboxQuery({ ...text, ...(cursor ? { cursor } : {}) }, principal));
      let cursor: string | undefined;
      for (let i = 0; i < (page.skip ?? 0); i++) cursor = (await readInboxPage(db, await search(cursor), PUBLIC_BASE_URL)).nextCursor ?? undefined;
      const times: number[] = [];
      let items = 0;
      for (let run = 0; run <= PLAN.runs && Date.now() < deadline; run++) {
        const started = performance.now();
        const answer = await readInboxPage(db, await search(cursor), PUBLIC_BASE_URL);
        // The first run warms the caches and is not counted.
        if (run > 0) times.push(performance.now() - started);
        items = answer.items.length;
      }
      times.sort((a, b) => a - b);
      // The plan it was read with: the first, and the merge when a window held no page.
      const resolved = await search(cursor);
      const first = firstPlan(resolved);
      const plans = [{ plan: first, ...(await explain(db, resolved, first)) }];
      if (first === 'window' && plans[0]!.rows <= resolved.limit) {
        const alertIds = resolved.alertIds === 'all' ? (await db.query<{ id: number }>('SELECT id FROM alerts ORDER BY id')).rows.map((r) => r.id) : resolved.alertIds;
        plans.push({ plan: 'merge', ...(await explain(db, { ...resolved, alertIds }, 'merge')) });
      }
      measured[label] = {
        query: page.query,
        items,
        runs: times.length,
        p50Ms: round(percentile(times, 50), 1),
        p95Ms: round(percentile(times, 95), 1),
        plans,
      };
    }
    const loadAfter = loadAverage();

    phase(`${kind}: what the inbox's indexes cost the writes`);
    const writes = Date.now() < deadline ? await writeCost(db, kind, seed) : null;
    return { seedSeconds, loadBefore, loadAfter, pages: measured, skipped, writes };
  } finally {
    await dispose();
  }
}

/**
 * New cases, and cases given a new match (as record-matches.ts bumps them: match_count and updated_at), in batches of
 * `writeBatch`, with 0017's indexes and without them (dropped at the end, the database thrown away after): the wall
 * time, and the CPU time of what ran them (the PostgreSQL backend's schedstat; for PGlite, this process, whose thread
 * runs the database), which the machine's other load moves less.
 */
const INBOX_INDEXES = ['cases_updated', 'cases_created', 'cases_alert_status_updated', 'cases_alert_status_created', 'cases_assignee'];
async function writeCost(db: Database, kind: 'postgres' | 'pglite', seed: InboxSeed) {
  const alerts = seed.alertIds.flat();
  let next = 0;
  const measure = () =>
    db.withConnection(async (conn) => {
      const pid = kind === 'postgres' ? (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid : 0;
      const cpuNs = () => {
        if (kind === 'postgres') return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
        const { user, system } = process.cpuUsage();
        return (user + system) * 1000;
      };
      const timed = async (sql: string, values: unknown[]) => {
        const [cpu, wall] = [cpuNs(), performance.now()];
        await conn.query(sql, values);
        return { us: ((performance.now() - wall) * 1000) / PLAN.writeBatch, cpuUs: (cpuNs() - cpu) / 1000 / PLAN.writeBatch };
      };
      const runs = { insert: [] as { us: number; cpuUs: number }[], newMatch: [] as { us: number; cpuUs: number }[] };
      for (let i = 0; i < 3; i++) {
        const tag = `bench-write-${next++}`;
        runs.insert.push(
          await timed(
            `INSERT INTO cases (alert_id, hash, nodes, edges) SELECT ($1::int[])[1 + g % cardinality($1::int[])], md5($2 || g), ARRAY[$2 || g], '{}' FROM generate_series(1, $3::int) g`,
            [alerts, tag, PLAN.writeBatch],
          ),
        );
        // Cases of the year spread over the table, as a run's new matches fall on cases of any age.
        runs.newMatch.push(
          await timed(`UPDATE cases SET match_count = match_count + 1, updated_at = now() WHERE id IN (SELECT id FROM cases WHERE id % $1 = $2 LIMIT $3)`, [
            Math.floor(PLAN.cases / PLAN.writeBatch),
            next,
            PLAN.writeBatch,
          ]),
        );
      }
      const middle = (values: { us: number; cpuUs: number }[]) => {
        const byWall = [...values].sort((a, b) => a.us - b.us)[1]!;
        return { microseconds: round(byWall.us, 1), cpuMicroseconds: round(values.reduce((sum, v) => sum + v.cpuUs, 0) / values.length, 1) };
      };
      return { perNewCase: middle(runs.insert), perBumpedCase: middle(runs.newMatch) };
    });
  const withIndexes = await measure();
  for (const name of INBOX_INDEXES) await db.query(`DROP INDEX ${name}`);
  const withoutIndexes = await measure();
  return { batch: PLAN.writeBatch, withIndexes, withoutIndexes };
}

const started = Date.now();
const kinds = which === 'both' ? (['postgres', 'pglite'] as const) : [which as 'postgres' | 'pglite'];
const report: Record<string, unknown> = {
  mode: quick ? 'quick' : 'full',
  startedAt: new Date().toISOString(),
  machine: { cpus: os.cpus().length, memoryGb: round(os.totalmem() / 2 ** 30, 1), node: process.version },
  plan: { ...PLAN, memberAlerts: MEMBER_ALERTS, budgetSeconds: budgetMs / 1000 },
  databases: {} as Record<string, unknown>,
};
for (const [i, kind] of kinds.entries()) {
  // Each database its share of what is left of the budget.
  const deadline = Date.now() + (started + budgetMs - Date.now()) / (kinds.length - i);
  (report.databases as Record<string, unknown>)[kind] = await benchDatabase(kind, deadline);
}
report.durationSeconds = round((Date.now() - started) / 1000, 0);
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
phase(`written to ${path.relative(process.cwd(), outFile)}`);

type Figures = Awaited<ReturnType<typeof benchDatabase>>;
type Measured = { items: number; p50Ms: number; p95Ms: number; plans: { plan: string; casesRead: number; buffers: number; seqScans: string[] }[] };
for (const [kind, figures] of Object.entries(report.databases as Record<string, Figures>)) {
  console.log(`\n${kind} (seeded in ${figures.seedSeconds} s; load average ${figures.loadBefore.join(' ')} → ${figures.loadAfter.join(' ')})`);
  console.log('| page | p50 ms | p95 ms | plan | cases read | buffers |\n|---|---|---|---|---|---|');
  for (const [name, m] of Object.entries(figures.pages as Record<string, Measured>)) {
    const plan = m.plans.map((p) => p.plan).join(' → ');
    const read = m.plans.map((p) => p.casesRead.toLocaleString('en')).join(' + ');
    const buffers = m.plans.map((p) => p.buffers.toLocaleString('en')).join(' + ');
    const scans = m.plans.flatMap((p) => p.seqScans);
    console.log(`| ${name} | ${m.p50Ms} | ${m.p95Ms} | ${plan} | ${read} | ${buffers}${scans.length ? ` (seq scan: ${scans.join(', ')})` : ''} |`);
  }
  if (figures.skipped.length) console.log(`left out (past the budget): ${figures.skipped.join('; ')}`);
  console.log(`writes: ${JSON.stringify(figures.writes)}`);
}
