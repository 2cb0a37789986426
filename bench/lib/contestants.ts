/**
 * The contestants of the contention bench (bench/contention.ts), behind one shape: a backlog made ready with nothing
 * sending, then a fresh process that sends it. The service on PostgreSQL and on PGlite (the compiled service, as
 * `npm start` runs it), and the peers (peers/peer.ts) on the same PostgreSQL server.
 */
import { AdminClient } from './api.js';
import type { PeerDatabase, PeerWorker } from './peers/peer.js';
import { ingestBacklog, prepareServiceDatabase, type ServiceDatabase } from './service-database.js';
import { ServiceProcess } from './service.js';

/** The process sending a contestant's deliveries. */
export interface Sender {
  pid: number;
  peakRssMb(): number;
  /** Throws if the process ended on its own. */
  check(): void;
  /** Stops sending and ends the process (its last outcomes written). */
  stop(): Promise<void>;
}

export interface Contestant {
  name: string;
  /** Its database on the PostgreSQL server (whose backends and statements are its), or undefined (PGlite, in-process). */
  database: string | undefined;
  /** Makes a backlog of `deliveries` ready, nothing sending. */
  prepare(deliveries: number): Promise<void>;
  /** A fresh process that sends the backlog. */
  start(): Promise<Sender>;
  dispose(): Promise<void>;
}

const ADMIN_PASSWORD = 'bench-admin-password';
export const BENCH_WEBHOOKS = 10;

/** The service under test, on one database: 10 webhooks on the bench source, one on the steady source (latency). */
export class ServiceContestant implements Contestant {
  readonly database: string | undefined;
  #benchAlert = 0;
  #steadyAlert = 0;

  private constructor(
    readonly name: string,
    private readonly cli: string,
    private readonly db: ServiceDatabase,
    private readonly env: Record<string, string>,
    private readonly schedule: string,
    /** Where each drain's service writes a V8 CPU profile (--profile), if anywhere. */
    private readonly profileDir: string | undefined,
  ) {
    this.database = db.name;
  }

  /** A database of its own, the admin, the sources, alerts and webhooks; delivery off. */
  static async create(options: { name: string; kind: 'postgres' | 'pglite'; cli: string; pgUrl: string; receiverUrl: string; schedule: string; profileDir?: string | undefined }): Promise<ServiceContestant> {
    const db = await prepareServiceDatabase(options.kind, options.pgUrl, `aw_contention_${options.name.replace(/\W/g, '_')}`);
    const env = { ...db.env, ADMIN_PASSWORD, PUBLIC_BASE_URL: 'http://localhost:3000' };
    const contestant = new ServiceContestant(options.name, options.cli, db, env, options.schedule, options.profileDir);
    await contestant.#withService(async (api) => {
      await api.settings({ deliveryFrequency: 'none', cleanupFrequency: 'none' });
      for (const key of ['bench', 'steady']) await api.call('POST', '/api/admin/sources', { key, name: key });
      contestant.#benchAlert = (await api.call<{ id: number }>('POST', '/api/admin/bench/alerts', { title: 'Shared phone numbers', description: 'Two clients share a phone' })).id;
      contestant.#steadyAlert = (await api.call<{ id: number }>('POST', '/api/admin/steady/alerts', { title: 'Steady load', description: '' })).id;
      for (let i = 0; i < BENCH_WEBHOOKS; i++) {
        await api.call('POST', '/api/admin/webhooks', { url: options.receiverUrl, secret: `bench-webhook-secret-${i}`, events: [{ eventType: 'newCase', sourceKey: 'bench' }] });
      }
      await api.call('POST', '/api/admin/webhooks', { url: options.receiverUrl, secret: 'steady-webhook-secret', events: [{ eventType: 'newCase', sourceKey: 'steady' }] });
    });
    return contestant;
  }

  get steadyAlert(): number {
    return this.#steadyAlert;
  }

  async prepare(deliveries: number): Promise<void> {
    await this.#withService((api) => ingestBacklog(api, this.#benchAlert, this.name, deliveries, BENCH_WEBHOOKS));
  }

  async start(): Promise<Sender> {
    const { service, api } = await this.startService(this.profileDir);
    await api.settings({ deliveryFrequency: this.schedule });
    return {
      pid: service.child.pid!,
      peakRssMb: () => service.peakRssMb(),
      check: () => {
        if (service.child.exitCode !== null) throw new Error(`the service exited with ${service.child.exitCode}`);
      },
      stop: async () => {
        await api.settings({ deliveryFrequency: 'none' });
        await api.close();
        await service.stop();
      },
    };
  }

  /** A fresh service process and its signed-in admin (delivery as the stored settings say). */
  async startService(profileDir?: string): Promise<{ service: ServiceProcess; api: AdminClient }> {
    const service = await ServiceProcess.start(this.cli, this.env, profileDir);
    const api = new AdminClient(service.baseUrl);
    await api.signIn(ADMIN_PASSWORD);
    return { service, api };
  }

  async #withService<T>(work: (api: AdminClient) => Promise<T>): Promise<T> {
    const { service, api } = await this.startService();
    try {
      return await work(api);
    } finally {
      await api.close();
      await service.stop();
    }
  }

  async dispose(): Promise<void> {
    await this.db.dispose();
  }
}

/** A peer job queue (graphile-worker, pg-boss) in its database on the PostgreSQL server. */
export class PeerContestant implements Contestant {
  constructor(
    private readonly db: PeerDatabase,
    private readonly receiverUrl: string,
    private readonly profileDir?: string,
  ) {}

  get name(): string {
    return this.db.definition.name;
  }

  get database(): string {
    return this.db.name;
  }

  async prepare(deliveries: number): Promise<void> {
    await this.db.addJobs(deliveries, BENCH_WEBHOOKS);
  }

  async start(): Promise<Sender> {
    const worker: PeerWorker = await this.db.startWorker(this.receiverUrl, this.profileDir);
    return { pid: worker.pid, peakRssMb: () => worker.peakRssMb(), check: () => worker.check(), stop: () => worker.stop() };
  }

  dispose(): Promise<void> {
    return this.db.dispose();
  }
}
