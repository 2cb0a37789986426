import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { AdminClient } from './api.js';
import { progress, round } from './progress.js';

/** The service's database for one bench run, made here and removed by `dispose`. */
export interface ServiceDatabase {
  /** The service's env for it: DATABASE_URL or DATA_DIR. */
  env: Record<string, string>;
  /** PostgreSQL: the database's name on the server. */
  name?: string;
  dispose(): Promise<void>;
}

/** Runs `statements` in turn on the PostgreSQL server at `pgUrl`, on a connection of their own (CREATE/DROP DATABASE). */
export async function onServer(pgUrl: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A database of the run's own on the PostgreSQL server at `pgUrl` (named after `tag`), or a throwaway DATA_DIR for PGlite. */
export async function prepareServiceDatabase(kind: 'postgres' | 'pglite', pgUrl: string, tag = 'aw_bench'): Promise<ServiceDatabase> {
  if (kind === 'postgres') {
    const name = `${tag}_${process.pid}`;
    await onServer(pgUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `CREATE DATABASE ${name}`);
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    return { env: { DATABASE_URL: url.toString() }, name, dispose: () => onServer(pgUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-bench-'));
  return { env: { DATA_DIR: dataDir }, dispose: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** Runs `call(0)` … `call(calls - 1)`, `concurrency` at once, in order of their index; answers the seconds taken. */
export async function timedCalls(calls: number, concurrency: number, call: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) await call(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

export const MATCHES_PER_CALL = 100;
export const INGEST_CONCURRENCY = 4;

/**
 * Reports a drain's backlog through the API: `deliveries` / `webhooks` new cases on the bench alert, MATCHES_PER_CALL a
 * call, INGEST_CONCURRENCY calls at once (each case is delivered to each of the `webhooks` subscribed webhooks).
 */
export async function ingestBacklog(api: AdminClient, alertId: number, label: string, deliveries: number, webhooks: number) {
  const events = deliveries / webhooks;
  const tag = Date.now();
  const seconds = await timedCalls(Math.ceil(events / MATCHES_PER_CALL), INGEST_CONCURRENCY, async (call) => {
    const matches = Array.from({ length: Math.min(MATCHES_PER_CALL, events - call * MATCHES_PER_CALL) }, (_, i) => ({ nodes: [`n${tag}-${call}-${i}`, `m${tag}-${call}-${i}`], edges: [`e${tag}-${call}-${i}`] }));
    await api.call('POST', `/api/admin/bench/alerts/${alertId}/matches`, { matches });
    progress(`${label}: ingest ${(call + 1) * MATCHES_PER_CALL} / ${events} events`);
  });
  return { events, seconds: round(seconds, 2), eventsPerSecond: Math.round(events / seconds), deliveriesPerSecond: Math.round((events * webhooks) / seconds) };
}
