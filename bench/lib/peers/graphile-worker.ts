/**
 * graphile-worker 0.17 as a peer (see peer.ts): jobs added with `addJobs` (graphile_worker.add_jobs), sent by
 * graphile-worker-process.ts with the settings of graphile-worker-settings.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWorkerUtils } from 'graphile-worker';
import type { PeerDefinition } from './peer.js';
import { GRAPHILE_PRESET, PEER_TASK } from './graphile-worker-settings.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export function graphileWorkerPeer(version: string): PeerDefinition {
  return {
    name: 'graphile-worker',
    version,
    settings: { ...GRAPHILE_PRESET },
    workerScript: path.join(HERE, 'graphile-worker-process.ts'),
    async addJobs(connectionString, payloads) {
      const utils = await makeWorkerUtils({ connectionString, schema: GRAPHILE_PRESET.schema });
      try {
        await utils.migrate();
        await utils.addJobs(payloads.map((payload) => ({ identifier: PEER_TASK, payload })));
      } finally {
        await utils.release();
      }
    },
  };
}
