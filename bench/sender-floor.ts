/**
 * The sender's floor (issue 30): what sending costs a process with no database at all, in CPU µs a request, beside
 * what the service's own sender costs for the same requests. `npx tsx bench/sender-floor.ts [--requests 30000]
 * [--rounds 3] [--only attempt-batched,…] [--hold 2048] [--profile]`. Each variant runs in a fresh process of its own
 * (warmed up first), interleaved round by round, against the bench's receiver in another process, 64 at a time, the
 * bench's signed newCase bodies:
 *
 * - `undici-request`: undici's `Pool.request` and a dump of the body, with both HMACs (as the ceiling, and as the
 *   peers' workers send);
 * - `undici-dispatch`: `Pool.dispatch` with a handler that keeps nothing, with both HMACs (the least a sender does);
 * - `delivery-sender`: the service's DeliverySender.send, signed by signPayload as attemptDelivery signs, with
 *   every outcome kept as the attempt log keeps it (no database: no claim, no outcome write);
 * - `attempt-batched`: the service's attemptDelivery (signing, sending, the retry decision, the attempt log entry),
 *   its records held in batches of 2,048 (a deep drain's outcome batch) and each batch's statement parameters built
 *   (recordParameters), never sent: everything the worker does for a delivery but claim, schedule and write. With `--hold N`, its
 *   deliveries are made N ahead of their attempts, as a deep drain holds its claims.
 *
 * CPU is read from /proc: the whole process (all its threads: V8's garbage collection helpers too) and its main
 * thread alone, over the measured requests only.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool, type Dispatcher } from 'undici';
import { DeliverySender } from '../src/delivery/sender.js';
import { signPayload, createSigningKey } from '../src/delivery/signer.js';
import { attemptDelivery } from '../src/delivery/attempt.js';
import { recordParameters, type AttemptRecord, type ClaimedDelivery } from '../src/outbox/claims.js';
import { createLogger } from '../src/logger.js';
import { caseBody, deliveryHeaders, webhookKey } from './lib/ceiling.js';
import { mainThread } from './lib/process-stats.js';
import { Receiver } from './lib/receiver-client.js';
import { median } from './lib/progress.js';

const VARIANTS = ['undici-request', 'undici-dispatch', 'delivery-sender', 'attempt-batched'] as const;
type Variant = (typeof VARIANTS)[number];
const CONCURRENCY = 64;
// --profile: each child writes a V8 CPU profile in bench/results/profiles (the warm-up included).
const PROFILE_DIR = process.argv.includes('--profile') ? fileURLToPath(new URL('results/profiles', import.meta.url)) : undefined;

interface Figures {
  variant: Variant;
  requests: number;
  perSecond: number;
  /** CPU µs a request, all threads / the main thread. */
  cpuUs: number;
  mainThreadUs: number;
}

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};

if (option('child', '') !== '') {
  const variant = option('child', '') as Variant;
  const url = new URL(option('url', ''));
  const requests = Number(option('requests', '30000'));
  process.send!(await runChild(variant, url, requests));
  process.exit(0);
} else {
  const receiver = await Receiver.start();
  const requests = Number(option('requests', '30000'));
  const rounds = Number(option('rounds', '3'));
  const ONLY = option('only', VARIANTS.join(',')).split(',') as Variant[];
  const all: Figures[] = [];
  for (let round = 0; round < rounds; round++) {
    // Each round starts with another variant, so none is always first after the receiver's idle time.
    for (let k = 0; k < VARIANTS.length; k++) {
      const variant = VARIANTS[(round + k) % VARIANTS.length]!;
      if (!ONLY.includes(variant)) continue;
      const child = fork(fileURLToPath(import.meta.url), ['--child', variant, '--url', receiver.url, '--requests', String(requests), '--hold', option('hold', '0')], {
        execArgv: ['--import', 'tsx', ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [])],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const figures = await new Promise<Figures>((resolve) => child.once('message', (m: Figures) => resolve(m)));
      all.push(figures);
      console.log(`round ${round + 1} ${variant}: ${figures.perSecond}/s, ${figures.cpuUs} µs a request (main thread ${figures.mainThreadUs})`);
    }
  }
  console.log('\nmedians:');
  for (const variant of ONLY) {
    const mine = all.filter((f) => f.variant === variant);
    console.log(
      `${variant.padEnd(16)} ${median(mine.map((f) => f.perSecond))}/s  CPU ${median(mine.map((f) => f.cpuUs))} µs a request (main thread ${median(mine.map((f) => f.mainThreadUs))})`,
    );
  }
  receiver.child.kill();
}

async function runChild(variant: Variant, url: URL, requests: number): Promise<Figures> {
  const key = webhookKey(0);
  const send = senderOf(variant, url, key);
  let next = 0;
  const drain = async (count: number): Promise<void> => {
    next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) await send(next++);
      }),
    );
  };
  await drain(Math.min(requests, 10_000)); // warm-up: JIT and connections, both sides
  const cpu0 = process.cpuUsage();
  const main0 = mainThread(process.pid);
  const started = performance.now();
  await drain(requests);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThread(process.pid);
  const mainSeconds = main1.cpuSeconds - main0.cpuSeconds;
  return {
    variant,
    requests,
    perSecond: Math.round(requests / seconds),
    cpuUs: Math.round((cpu.user + cpu.system) / requests),
    mainThreadUs: Math.round((mainSeconds * 1e6) / requests),
  };
}

function senderOf(variant: Variant, url: URL, key: ReturnType<typeof webhookKey>): (i: number) => Promise<unknown> {
  const kept: unknown[] = [];
  switch (variant) {
    case 'undici-request': {
      const pool = new Pool(url.origin, { connections: CONCURRENCY });
      return async (i) => {
        const body = caseBody(i);
        const response = await pool.request({ method: 'POST', path: url.pathname, headers: deliveryHeaders(key, i, body), body });
        await response.body.dump();
      };
    }
    case 'undici-dispatch': {
      const pool = new Pool(url.origin, { connections: CONCURRENCY });
      return (i) => {
        const body = caseBody(i);
        return new Promise<void>((resolve, reject) => {
          const handler: Dispatcher.DispatchHandler = {
            onRequestStart: () => undefined,
            onResponseStart: () => undefined,
            onResponseData: () => undefined,
            onResponseEnd: () => resolve(),
            onResponseError: (_controller, error) => reject(error),
          };
          pool.dispatch({ method: 'POST', path: url.pathname, headers: deliveryHeaders(key, i, body), body }, handler);
        });
      };
    }
    case 'delivery-sender': {
      const sender = new DeliverySender();
      return async (i) => {
        const now = Date.now();
        const body = Buffer.from(caseBody(i), 'utf8');
        const headers = signPayload([key], i, Math.floor(now / 1000), body);
        const outcome = await sender.send({ url: url.href, body, headers, timeoutMs: 10_000 });
        // Kept as long as an outcome batch keeps them (a batch's worth, then dropped), as the worker's writer does.
        kept.push({ attemptedAt: new Date(now).toISOString(), ...outcome });
        if (kept.length === 256) kept.length = 0;
      };
    }
    case 'attempt-batched': {
      const context = { sender: new DeliverySender(), settings: { requestTimeoutMs: 10_000, retryScheduleMs: [1_000, 60_000] }, log: createLogger('info') };
      const endpoint = { url: url.href, key: createSigningKey('bench-webhook-secret-0'), version: 1 };
      let batch: AttemptRecord[] = [];
      // Deliveries made `--hold` ahead of their attempt, as a deep drain holds its claims (0: made as they go).
      const hold = Number(option('hold', '0'));
      const held: ClaimedDelivery[] = [];
      let claimed = 0;
      return async () => {
        while (held.length <= hold) {
          const n = claimed++;
          held.push({ id: n + 1, webhookId: 1, attempts: 1, leaseToken: 1, isPing: false, payload: caseBody(n), webhookVersion: 1 });
        }
        const delivery = held.shift()!;
        batch.push(await attemptDelivery(delivery, endpoint, context));
        if (batch.length === 2048) {
          recordParameters(batch, 0);
          batch = [];
        }
      };
    }
  }
}
