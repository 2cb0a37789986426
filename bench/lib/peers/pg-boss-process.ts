/**
 * pg-boss 10 as a webhook sender, in a process of its own (forked by peer.ts with `--import tsx`): several workers,
 * each fetching a batch of jobs; every job's pre-rendered newCase body is signed as the service signs a delivery (both
 * HMACs, with its webhook's key) and POSTed to the receiver through one undici Pool. The jobs whose answer is not 2xx
 * are failed (so retried); pg-boss then completes the rest of the batch in one statement. Env: PEER_DATABASE_URL,
 * PEER_RECEIVER_URL. IPC: `ready` once it runs, `stop` to end.
 */
import { Pool } from 'undici';
import { deliveryHeaders, webhookKey } from '../ceiling.js';
import type { PeerJobPayload } from './peer.js';
import { startPgBoss } from './pg-boss.js';
import { PG_BOSS_QUEUE, PG_BOSS_SETTINGS } from './pg-boss-settings.js';

const receiver = new URL(process.env.PEER_RECEIVER_URL!);
const pool = new Pool(receiver.origin, { connections: PG_BOSS_SETTINGS.connections });
// Keys made once per webhook, as the service's endpoint cache does.
const keys = new Map<number, ReturnType<typeof webhookKey>>();

async function send(id: string, { webhook, body }: PeerJobPayload): Promise<boolean> {
  let key = keys.get(webhook);
  if (!key) keys.set(webhook, (key = webhookKey(webhook)));
  try {
    const response = await pool.request({ method: 'POST', path: receiver.pathname, headers: deliveryHeaders(key, id, body), body });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300;
  } catch {
    return false;
  }
}

const boss = await startPgBoss(process.env.PEER_DATABASE_URL!);
for (let i = 0; i < PG_BOSS_SETTINGS.workers; i++) {
  await boss.work<PeerJobPayload>(PG_BOSS_QUEUE, { batchSize: PG_BOSS_SETTINGS.batchSize, pollingIntervalSeconds: PG_BOSS_SETTINGS.pollingIntervalSeconds }, async (jobs) => {
    const sent = await Promise.all(jobs.map((job) => send(job.id, job.data)));
    const failed = jobs.filter((_, i) => !sent[i]).map((job) => job.id);
    if (failed.length > 0) await boss.fail(PG_BOSS_QUEUE, failed);
  });
}
process.send!({ type: 'ready' });
process.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  void boss
    .stop({ graceful: true, wait: true })
    .then(() => pool.close())
    .then(() => process.exit(0));
});
