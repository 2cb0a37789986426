/**
 * The fair-share bench: `npm run bench:fair [-- --before REF] [--queries N] [--slow-ms MS]`. One service, one small
 * embedded graph, two API keys (the service counts a key's queries as the key's: two holders). B runs N small
 * queries one after the other (default 20), first alone, then while A runs four slow ones (a cross product Kùzu stops
 * at its time-out, --slow-ms, default 8,000 ms); the bench prints B's p50 and p95 both ways. --before REF runs the
 * same on the service as it was at git revision REF (HEAD: before the change in the work tree), for a side-by-side.
 * bench/README.md ("Fair share on one graph") says how to read it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { AdminClient } from './lib/api.js';
import { buildService, buildServiceAt, type ServiceBuild } from './lib/build.js';
import { percentile, phase, round, sleep } from './lib/progress.js';
import { ServiceProcess } from './lib/service.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const BEFORE = option('--before');
const QUERIES = Number(option('--queries') ?? 20);
const SLOW_MS = Number(option('--slow-ms') ?? 8_000);
const ADMIN_PASSWORD = 'bench-admin-password';
const SOURCE = 'shared';
// test/support/fixtures.ts's SLOW_CROSS_PRODUCT: 4·10^10 rows, which no time-out of the bench outlives.
const SLOW = 'UNWIND range(1, 20000) AS x UNWIND range(1, 20000) AS y UNWIND range(1, 100) AS z WITH x, y, z WHERE (x * y + z) % 7 = 3 RETURN count(*) AS s';
const SMALL = 'MATCH (c:Client) RETURN c';

interface Figures {
  alone: { p50: number; p95: number };
  loaded: { p50: number; p95: number; max: number };
  heavyStatuses: number[];
}

/** B's latencies alone and beside A's four slow queries, on a fresh service of `build`. */
async function measure(build: ServiceBuild, label: string): Promise<Figures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-fair-bench-'));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  let service: ServiceProcess | undefined;
  let admin: AdminClient | undefined;
  try {
    phase(`${label}: starting the service, a small graph, two API keys`);
    service = await ServiceProcess.start(build.cli, { DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' });
    admin = new AdminClient(service.baseUrl);
    await admin.signIn(ADMIN_PASSWORD);
    await admin.call('POST', '/api/admin/sources', { key: SOURCE, name: 'Shared', graph: { vendor: 'embedded' } });
    for (const query of ['CREATE NODE TABLE Client(id STRING, PRIMARY KEY(id))', "CREATE (:Client {id: 'alice'}), (:Client {id: 'bob'})"]) {
      await admin.call('POST', `/api/${SOURCE}/graph/run/query`, { query });
    }
    const keyOf = async (name: string) => (await admin!.call<{ apiKey: string }>('POST', '/api/admin/applications', { name, groups: [1] })).apiKey;
    const [a, b] = [await keyOf('user A'), await keyOf('user B')];
    const baseUrl = service.baseUrl;
    const query = async (key: string, body: Record<string, unknown>) => {
      const response = await request(`${baseUrl}/api/${SOURCE}/graph/run/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`admin@localhost:${key}`).toString('base64')}` },
        body: JSON.stringify(body),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      await response.body.dump();
      return response.statusCode;
    };
    const runB = async () => {
      const latencies: number[] = [];
      for (let i = 0; i < QUERIES; i++) {
        const sent = performance.now();
        const status = await query(b, { query: SMALL });
        if (status !== 200) throw new Error(`B's query answered ${status}`);
        latencies.push(performance.now() - sent);
      }
      return latencies.sort((x, y) => x - y);
    };
    await runB();
    phase(`${label}: B alone, ${QUERIES} small queries`);
    const alone = await runB();
    phase(`${label}: B beside A's four slow queries (time-out ${SLOW_MS} ms)`);
    const heavy = [1, 2, 3, 4].map(() => query(a, { query: SLOW, timeout: SLOW_MS }));
    await sleep(300);
    const loaded = await runB();
    const heavyStatuses = await Promise.all(heavy);
    const at = (sorted: number[], p: number) => round(percentile(sorted, p), 0);
    return {
      alone: { p50: at(alone, 50), p95: at(alone, 95) },
      loaded: { p50: at(loaded, 50), p95: at(loaded, 95), max: round(loaded.at(-1)!, 0) },
      heavyStatuses,
    };
  } finally {
    await admin?.close().catch(() => undefined);
    await service?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

phase('building the service');
const builds: [string, ServiceBuild][] = [['work tree', await buildService()]];
if (BEFORE) {
  phase(`building the service at ${BEFORE}`);
  builds.unshift([BEFORE, await buildServiceAt(BEFORE)]);
}
try {
  const lines: string[] = [];
  for (const [label, build] of builds) {
    const f = await measure(build, label);
    lines.push(
      `${label.padEnd(10)} B alone: p50 ${f.alone.p50} ms, p95 ${f.alone.p95} ms | B beside A's four slow queries: p50 ${f.loaded.p50} ms, p95 ${f.loaded.p95} ms, max ${f.loaded.max} ms (A answered ${f.heavyStatuses.join(', ')})`,
    );
  }
  console.log(`
Fair share on one graph: ${QUERIES} small queries of B, one at a time; A's slow queries stopped at ${SLOW_MS} ms (${os.availableParallelism()} cores, load ${os.loadavg().map((l) => round(l, 2)).join(' ')})
${lines.join('\n')}`);
} finally {
  for (const [, build] of builds) build.dispose();
}
