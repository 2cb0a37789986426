/**
 * A peer job queue sending the bench's deliveries (graphile-worker, pg-boss): its jobs added in bulk to a database of
 * its own on the PostgreSQL server, then a fresh worker process of its own on the backlog, signing each body as the
 * service does and POSTing it to the same receiver. What differs between peers is in a PeerDefinition; the lifecycle
 * (database, jobs, worker process, drain) is here, shared by `npm run bench -- --peers` and the contention bench.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { caseBody } from '../ceiling.js';
import { phase, progress, round, waitUntil } from '../progress.js';
import type { Receiver } from '../receiver-client.js';
import { peakRssMb } from '../rss.js';
import { onServer } from '../service-database.js';

/** A job: which bench webhook (its signing key) and the body, rendered when the job is added as an event's is. */
export interface PeerJobPayload {
  webhook: number;
  body: string;
}

export interface PeerDefinition {
  name: string;
  version: string;
  /** The settings it runs with, for the report. */
  settings: Record<string, unknown>;
  /** The worker process's module (forked with `--import tsx`; env PEER_DATABASE_URL, PEER_RECEIVER_URL; IPC `ready`, `stop`). */
  workerScript: string;
  /** Makes its schema in the database (once) and adds these jobs, in bulk. */
  addJobs(connectionString: string, payloads: PeerJobPayload[]): Promise<void>;
}

export interface PeerFigures {
  name: string;
  version: string;
  settings: Record<string, unknown>;
  deliveries: number;
  /** Jobs added per second (in chunks of ADD_CHUNK): not a figure of the issue, for the record. */
  jobsAddedPerSecond: number;
  seconds: number;
  deliveriesPerSecond: number;
  ratioToCeiling: number;
  peakRssMb: number;
  /** Received beyond `deliveries` (a job retried): 0 expected. */
  extraReceived: number;
}

const ADD_CHUNK = 10_000;

/** A peer's database on the PostgreSQL server, made on open and dropped on dispose. */
export class PeerDatabase {
  private constructor(
    readonly definition: PeerDefinition,
    private readonly serverUrl: string,
    readonly name: string,
    readonly connectionString: string,
  ) {}

  static async open(definition: PeerDefinition, serverUrl: string, tag: string): Promise<PeerDatabase> {
    const name = `aw_bench_${tag}_${process.pid}`;
    await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return new PeerDatabase(definition, serverUrl, name, url.toString());
  }

  /** Adds `deliveries` jobs, each a newCase body for one of `webhooks` webhooks in turn; answers jobs added per second. */
  async addJobs(deliveries: number, webhooks: number): Promise<number> {
    const createdAt = new Date();
    let seconds = 0;
    for (let done = 0; done < deliveries; done += ADD_CHUNK) {
      const payloads = Array.from({ length: Math.min(ADD_CHUNK, deliveries - done) }, (_, j) => ({ webhook: (done + j) % webhooks, body: caseBody(done + j, createdAt) }));
      const started = performance.now();
      await this.definition.addJobs(this.connectionString, payloads);
      seconds += (performance.now() - started) / 1000;
      progress(`${this.definition.name}: ${done + payloads.length} / ${deliveries} jobs added`);
    }
    return Math.round(deliveries / seconds);
  }

  /** Starts a fresh worker process on the backlog (writing a V8 CPU profile in `profileDir`, if given); answers once it runs. */
  async startWorker(receiverUrl: string, profileDir?: string): Promise<PeerWorker> {
    const child = fork(this.definition.workerScript, [], {
      execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
      env: { ...process.env, PEER_DATABASE_URL: this.connectionString, PEER_RECEIVER_URL: receiverUrl },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker = new PeerWorker(child);
    await worker.ready;
    return worker;
  }

  async dispose(): Promise<void> {
    await onServer(this.serverUrl, `DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
  }
}

/** A peer's worker process. */
export class PeerWorker {
  readonly ready: Promise<void>;
  readonly #exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    this.#exited = new Promise((resolve) => child.on('exit', resolve));
    this.ready = new Promise((resolve, reject) => {
      child.once('message', () => resolve());
      void this.#exited.then((code) => reject(new Error(`the ${child.spawnargs.at(-1)} process exited with ${code} while starting`)));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Throws if the process ended. */
  check(): void {
    if (this.child.exitCode !== null) throw new Error(`the peer's worker process exited with ${this.child.exitCode}`);
  }

  peakRssMb(): number {
    return peakRssMb(this.pid);
  }

  /** Asks it to stop (it finishes what it holds) and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.send({ type: 'stop' });
    await this.#exited;
  }
}

/**
 * The `--peers` run of one peer: a database of its own, `deliveries` jobs, then a fresh worker process on the backlog;
 * timed from the first receipt to the last, as the service's drain is.
 */
export async function runPeer(definition: PeerDefinition, options: { pgUrl: string; receiver: Receiver; deliveries: number; webhooks: number; ceiling: number }): Promise<PeerFigures> {
  const { receiver, deliveries, ceiling } = options;
  const db = await PeerDatabase.open(definition, options.pgUrl, definition.name.replace(/\W/g, '_'));
  try {
    phase(`peers: ${definition.name}, adding ${deliveries} jobs`);
    const jobsAddedPerSecond = await db.addJobs(deliveries, options.webhooks);
    phase(`peers: ${definition.name} drain of ${deliveries} jobs (a fresh worker process)`);
    await receiver.reset();
    const worker = await db.startWorker(receiver.url);
    let peak = 0;
    try {
      await waitUntil(`${definition.name} drain`, async () => {
        worker.check();
        peak = Math.max(peak, worker.peakRssMb());
        const s = await receiver.stats();
        return s.count >= deliveries || `${s.count} / ${deliveries} delivered`;
      }, 30 * 60_000);
      peak = Math.max(peak, worker.peakRssMb());
    } finally {
      await worker.stop();
    }
    const drained = await receiver.stats();
    const seconds = (drained.lastAt - drained.firstAt) / 1000;
    const rate = Math.round(deliveries / seconds);
    return {
      name: definition.name,
      version: definition.version,
      settings: definition.settings,
      deliveries,
      jobsAddedPerSecond,
      seconds: round(seconds, 2),
      deliveriesPerSecond: rate,
      ratioToCeiling: round(rate / ceiling, 3),
      peakRssMb: peak,
      extraReceived: drained.count - deliveries,
    };
  } finally {
    await db.dispose();
  }
}
