/**
 * graphile-worker 0.17 as a webhook sender, in a process of its own (forked by peer.ts with `--import tsx`,
 * as the ceiling client also runs): each job POSTs its pre-rendered newCase body, signed as the service signs a
 * delivery (both HMACs, with its webhook's key), to the receiver through one undici Pool; any answer but 2xx throws,
 * so graphile-worker retries it. Env: PEER_DATABASE_URL, PEER_RECEIVER_URL. IPC: `ready` once it runs, `stop` to end.
 */
import { Logger, run, type Task } from 'graphile-worker';
import { Pool } from 'undici';
import { deliveryHeaders, webhookKey } from '../ceiling.js';
import { GRAPHILE_PRESET, PEER_TASK } from './graphile-worker-settings.js';
import type { PeerJobPayload } from './peer.js';

const receiver = new URL(process.env.PEER_RECEIVER_URL!);
const pool = new Pool(receiver.origin, { connections: GRAPHILE_PRESET.concurrentJobs });
// Keys made once per webhook, as the service's endpoint cache does.
const keys = new Map<number, ReturnType<typeof webhookKey>>();

const deliver: Task = async (payload, helpers) => {
  const { webhook, body } = payload as PeerJobPayload;
  let key = keys.get(webhook);
  if (!key) keys.set(webhook, (key = webhookKey(webhook)));
  const response = await pool.request({ method: 'POST', path: receiver.pathname, headers: deliveryHeaders(key, helpers.job.id, body), body });
  await response.body.dump();
  if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`receiver answered ${response.statusCode}`);
};

// Warnings and errors only: graphile-worker logs every completed job at info, which the service (silent per
// delivery at info) does not pay for either.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

const runner = await run({
  preset: { worker: { ...GRAPHILE_PRESET, connectionString: process.env.PEER_DATABASE_URL! } },
  taskList: { [PEER_TASK]: deliver },
  noHandleSignals: true,
  logger,
});
process.send!({ type: 'ready' });
process.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  void runner
    .stop()
    .then(() => pool.close())
    .then(() => process.exit(0));
});
