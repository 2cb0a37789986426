/**
 * The peers mode's graphile-worker run (`npm run bench -- --peers`, PostgreSQL only): a database of its own on the
 * same server, `deliveries` jobs added in bulk (addJobs, i.e. graphile_worker.add_jobs, 10,000 a call), then a fresh
 * worker process (graphile-worker-process.ts) on the backlog, sending to the same receiver; timed from the first
 * receipt to the last, as the service's drain is.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { caseBody } from '../ceiling.js';
import { phase, progress, round, waitUntil } from '../progress.js';
import type { Receiver } from '../receiver-client.js';
import { peakRssMb } from '../rss.js';
import { GRAPHILE_PRESET, PEER_TASK, type PeerJobPayload } from './graphile-worker-settings.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ADD_CHUNK = 10_000;

export interface PeerFigures {
  name: string;
  version: string;
  settings: Record<string, unknown>;
  deliveries: number;
  /** Jobs added per second (addJobs, ADD_CHUNK a call): not a figure of the issue, for the record. */
  jobsAddedPerSecond: number;
  seconds: number;
  deliveriesPerSecond: number;
  ratioToCeiling: number;
  peakRssMb: number;
  /** Received beyond `deliveries` (a job retried): 0 expected. */
  extraReceived: number;
}

export async function runGraphileWorkerPeer(options: { pgUrl: string; receiver: Receiver; deliveries: number; webhooks: number; ceiling: number; version: string }): Promise<PeerFigures> {
  const { pgUrl, receiver, deliveries, webhooks, ceiling } = options;
  const name = `aw_bench_peer_${process.pid}`;
  await adminQuery(pgUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `CREATE DATABASE ${name}`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const connectionString = url.toString();
  try {
    phase(`peers: graphile-worker, adding ${deliveries} jobs`);
    const utils = await makeWorkerUtils({ connectionString, schema: GRAPHILE_PRESET.schema });
    let addSeconds = 0;
    try {
      await utils.migrate();
      const createdAt = new Date();
      for (let done = 0; done < deliveries; done += ADD_CHUNK) {
        const specs = Array.from({ length: Math.min(ADD_CHUNK, deliveries - done) }, (_, j) => {
          const i = done + j;
          const payload: PeerJobPayload = { webhook: i % webhooks, body: caseBody(i, createdAt) };
          return { identifier: PEER_TASK, payload };
        });
        const started = performance.now();
        await utils.addJobs(specs);
        addSeconds += (performance.now() - started) / 1000;
        progress(`peers: ${done + specs.length} / ${deliveries} jobs added`);
      }
    } finally {
      await utils.release();
    }

    phase(`peers: graphile-worker drain of ${deliveries} jobs (a fresh worker process)`);
    await receiver.reset();
    const child = fork(path.join(HERE, 'graphile-worker-process.ts'), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, PEER_DATABASE_URL: connectionString, PEER_RECEIVER_URL: receiver.url },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let peak = 0;
    try {
      await waitUntil('graphile-worker drain', async () => {
        if (child.exitCode !== null) throw new Error(`the graphile-worker process exited with ${child.exitCode}`);
        peak = Math.max(peak, peakRssMb(child.pid!));
        const s = await receiver.stats();
        return s.count >= deliveries || `${s.count} / ${deliveries} delivered`;
      }, 30 * 60_000);
      peak = Math.max(peak, peakRssMb(child.pid!));
    } finally {
      if (child.exitCode === null) child.send({ type: 'stop' });
      await exited;
    }
    const drained = await receiver.stats();
    const seconds = (drained.lastAt - drained.firstAt) / 1000;
    const rate = Math.round(deliveries / seconds);
    return {
      name: 'graphile-worker',
      version: options.version,
      settings: { ...GRAPHILE_PRESET },
      deliveries,
      jobsAddedPerSecond: Math.round(deliveries / addSeconds),
      seconds: round(seconds, 2),
      deliveriesPerSecond: rate,
      ratioToCeiling: round(rate / ceiling, 3),
      peakRssMb: peak,
      extraReceived: drained.count - deliveries,
    };
  } finally {
    await adminQuery(pgUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function adminQuery(pgUrl: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
