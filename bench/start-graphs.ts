/**
 * The start bench: `npx tsx bench/start-graphs.ts [--graphs N] [--rounds R] [--clients C]`. A service on the embedded
 * database with N embedded graphs (default 10), each of C clients sharing phones (default 2,000) and an alert on it
 * run once; then the service is stopped and started again R times (default 3) on the same DATA_DIR, and each start
 * is timed: until it serves (/health answers), until /health/ready answers 200, and until the alert schedule opened
 * every graph (the "embedded graph opened" lines), with the start's phases as the service logs them (issue 44, item
 * 15: a restart like this once did not answer within 120 s on a loaded machine). bench/README.md, "Start".
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { AdminClient } from './lib/api.js';
import { buildService } from './lib/build.js';
import { median, phase, round, sleep } from './lib/progress.js';
import { ServiceProcess } from './lib/service.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const GRAPHS = Number(option('--graphs') ?? 10);
const ROUNDS = Number(option('--rounds') ?? 3);
const CLIENTS = Number(option('--clients') ?? 2_000);
const ADMIN_PASSWORD = 'bench-admin-password';
const SHARED_PHONE = 'MATCH (a:Client)-[:HAS_PHONE]->(p:Phone)<-[:HAS_PHONE]-(b:Client) WHERE a.id < b.id RETURN a, b, p';

interface StartFigures {
  servingMs: number;
  readyMs: number;
  graphsOpenedMs: number;
  phases: Record<string, number>;
  graphOpenMs: number[];
}

/** One start on `dataDir`: timed from the spawn to each milestone. */
async function timedStart(cli: string, dataDir: string): Promise<{ service: ServiceProcess; figures: StartFigures }> {
  const began = performance.now();
  const service = await ServiceProcess.start(cli, { DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' });
  const servingMs = performance.now() - began;
  let readyMs: number;
  for (;;) {
    const response = await request(`${service.baseUrl}/health/ready`);
    await response.body.dump();
    if (response.statusCode === 200) {
      readyMs = performance.now() - began;
      break;
    }
    if (performance.now() - began > 120_000) throw new Error('not ready within 120 s');
    await sleep(50);
  }
  const opened = () => service.logLines.filter((l) => l.msg === 'embedded graph opened');
  while (opened().length < GRAPHS) {
    if (performance.now() - began > 180_000) throw new Error(`${opened().length} of ${GRAPHS} graphs opened within 180 s`);
    await sleep(50);
  }
  const graphsOpenedMs = performance.now() - began;
  const phases: Record<string, number> = {};
  for (const line of service.logLines) if (typeof line.phase === 'string') phases[line.phase] = Number(line.durationMs);
  const started = service.logLines.find((l) => l.msg === 'start: service started');
  if (started) phases['service started (all phases)'] = Number(started.durationMs);
  const serving = service.logLines.find((l) => l.msg === 'alert-webhooks is serving');
  if (serving) phases['process start to serving'] = Number(serving.startMs);
  return { service, figures: { servingMs, readyMs, graphsOpenedMs, phases, graphOpenMs: opened().map((l) => Number(l.durationMs)) } };
}

phase('building the service');
const build = await buildService();
const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-start-bench-'));
const dataDir = path.join(dir, 'data');
mkdirSync(dataDir);
let service: ServiceProcess | undefined;
try {
  phase(`a first start: ${GRAPHS} embedded graphs of ${CLIENTS.toLocaleString('en')} clients, an alert on each, run once`);
  service = await ServiceProcess.start(build.cli, { DATA_DIR: dataDir, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' });
  const admin = new AdminClient(service.baseUrl);
  await admin.signIn(ADMIN_PASSWORD);
  for (let g = 1; g <= GRAPHS; g++) {
    const key = `graph${g}`;
    await admin.call('POST', '/api/admin/sources', { key, name: `Graph ${g}`, graph: { vendor: 'embedded' } });
    for (const query of [
      'CREATE NODE TABLE Client(id STRING, PRIMARY KEY(id))',
      'CREATE NODE TABLE Phone(number STRING, PRIMARY KEY(number))',
      'CREATE REL TABLE HAS_PHONE(FROM Client TO Phone)',
      `UNWIND range(1, ${CLIENTS}) AS i CREATE (:Client {id: 'c' + CAST(i AS STRING)})`,
      `UNWIND range(1, ${Math.ceil(CLIENTS / 2)}) AS i CREATE (:Phone {number: 'p' + CAST(i AS STRING)})`,
      // Two clients a phone: c1 and c2 share p1, and so on.
      `UNWIND range(1, ${CLIENTS}) AS i MATCH (c:Client {id: 'c' + CAST(i AS STRING)}), (p:Phone {number: 'p' + CAST(CAST(floor((i + 1) / 2.0) AS INT64) AS STRING)}) CREATE (c)-[:HAS_PHONE]->(p)`,
    ]) {
      await admin.call('POST', `/api/${key}/graph/run/query`, { query });
    }
    const alert = await admin.call<{ id: number }>('POST', `/api/admin/${key}/alerts`, { title: 'Shared phones', cron: '0 * * * *', target: 'p', queries: [{ name: 'shared', query: SHARED_PHONE }] });
    await admin.call('POST', `/api/admin/${key}/alerts/${alert.id}/run`, { waitForRun: true });
  }
  await admin.close();
  await service.stop();
  service = undefined;

  const rounds: StartFigures[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    phase(`restart ${r} of ${ROUNDS} on the same DATA_DIR`);
    const started = await timedStart(build.cli, dataDir);
    service = started.service;
    rounds.push(started.figures);
    await service.stop();
    service = undefined;
  }
  const phaseNames = Object.keys(rounds[0]!.phases);
  console.log(`
Start with ${GRAPHS} embedded graphs (${CLIENTS.toLocaleString('en')} clients each, an alert on each), ${ROUNDS} restarts (${os.availableParallelism()} cores, load ${os.loadavg().map((l) => round(l, 2)).join(' ')})
  serving (/health 200), from the spawn: median ${round(median(rounds.map((f) => f.servingMs)), 0)} ms (${rounds.map((f) => round(f.servingMs, 0)).join(', ')})
  ready (/health/ready 200): median ${round(median(rounds.map((f) => f.readyMs)), 0)} ms (${rounds.map((f) => round(f.readyMs, 0)).join(', ')})
  every graph opened by the alert schedule: median ${round(median(rounds.map((f) => f.graphsOpenedMs)), 0)} ms (${rounds.map((f) => round(f.graphsOpenedMs, 0)).join(', ')})
  one graph's opening (its Kùzu process and catalogue): median ${round(median(rounds.flatMap((f) => f.graphOpenMs)), 0)} ms, max ${Math.max(...rounds.flatMap((f) => f.graphOpenMs))} ms
  phases as logged (median ms): ${phaseNames.map((name) => `${name} ${median(rounds.map((f) => f.phases[name] ?? 0))}`).join('; ')}`);
} finally {
  await service?.stop().catch(() => undefined);
  build.dispose();
  rmSync(dir, { recursive: true, force: true });
}
