/**
 * pg-boss 10 as a peer (see peer.ts): jobs added with `insert` (one statement for a chunk), sent by
 * pg-boss-process.ts with the settings of pg-boss-settings.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PgBoss from 'pg-boss';
import type { PeerDefinition } from './peer.js';
import { PG_BOSS_QUEUE, PG_BOSS_SETTINGS } from './pg-boss-settings.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** A pg-boss instance that only migrates and adds jobs: no maintenance, no schedules, no workers. */
export async function startPgBoss(connectionString: string, options: Partial<PgBoss.ConstructorOptions> = {}): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString, schema: PG_BOSS_SETTINGS.schema, max: PG_BOSS_SETTINGS.max, schedule: PG_BOSS_SETTINGS.schedule, ...options });
  boss.on('error', (err: Error) => process.stderr.write(`pg-boss error: ${err.message}\n`));
  await boss.start();
  if (!(await boss.getQueue(PG_BOSS_QUEUE))) await boss.createQueue(PG_BOSS_QUEUE);
  return boss;
}

export function pgBossPeer(version: string): PeerDefinition {
  return {
    name: 'pg-boss',
    version,
    settings: { ...PG_BOSS_SETTINGS },
    workerScript: path.join(HERE, 'pg-boss-process.ts'),
    async addJobs(connectionString, payloads) {
      const boss = await startPgBoss(connectionString, { supervise: false });
      try {
        await boss.insert(payloads.map((data) => ({ name: PG_BOSS_QUEUE, data })));
      } finally {
        await boss.stop({ graceful: false, wait: true });
      }
    },
  };
}
