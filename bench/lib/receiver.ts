/**
 * The benchmark's receiver, in a process of its own: answers 204 at once and counts. Driven over IPC by the
 * harness: `reset` (and whether to parse payloads for latency), `stats`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceiverStats {
  count: number;
  firstAt: number;
  lastAt: number;
  /** Receipt time minus the event's time (the case's createdAt/updatedAt in the payload), ms. */
  latencies: number[];
  /** The longest time between two receipts, ms. */
  maxGapMs: number;
}

let stats: ReceiverStats = fresh();
let measureLatency = false;

function fresh(): ReceiverStats {
  return { count: 0, firstAt: 0, lastAt: 0, latencies: [], maxGapMs: 0 };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    if (stats.count === 0) stats.firstAt = now;
    else stats.maxGapMs = Math.max(stats.maxGapMs, now - stats.lastAt);
    stats.lastAt = now;
    stats.count++;
    if (measureLatency) {
      // newCase carries createdAt, newMatch updatedAt: either is the time of the event's transaction.
      const body = Buffer.concat(chunks).toString('utf8');
      const at = /"updatedAt":"([^"]+)"/.exec(body)?.[1] ?? /"createdAt":"([^"]+)"/.exec(body)?.[1];
      if (at) stats.latencies.push(now - Date.parse(at));
    }
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port });
});

process.on('message', (message: { type: string; measureLatency?: boolean }) => {
  if (message.type === 'reset') {
    stats = fresh();
    measureLatency = message.measureLatency ?? false;
    process.send!({ type: 'reset-done' });
  } else if (message.type === 'stats') {
    process.send!({ type: 'stats', stats });
  } else if (message.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
