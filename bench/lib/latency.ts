import type { AdminClient } from './api.js';
import { percentile, progress, sleep, waitUntil } from './progress.js';
import type { Receiver } from './receiver-client.js';

export interface Latency {
  deliveryFrequency: string;
  eventsPerSecond: number;
  seconds: number;
  events: number;
  received: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * A steady load of new cases on the `steady` source (one webhook subscribes to it) for `seconds`, delivered under the
 * schedule in force (`schedule`, for the record): receipt time minus the event's time in the payload.
 */
export async function measureLatency(api: AdminClient, receiver: Receiver, alertId: number, schedule: string, eventsPerSecond: number, seconds: number): Promise<Latency> {
  await receiver.reset(true);
  const sent = await steadyLoad(api, alertId, eventsPerSecond, seconds * 1000, 'latency');
  await waitUntil('latency deliveries', async () => {
    const stats = await receiver.stats();
    return stats.count >= sent || `${stats.count} / ${sent} received`;
  }, 120_000);
  const latencies = (await receiver.stats()).latencies.sort((a, b) => a - b);
  return {
    deliveryFrequency: schedule,
    eventsPerSecond,
    seconds,
    events: sent,
    received: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? NaN,
  };
}

/** Reports matches for `eventsPerSecond` new cases on the `steady` source, in calls every 100 ms, for `durationMs` (or until `stop`). */
export async function steadyLoad(api: AdminClient, alertId: number, eventsPerSecond: number, durationMs: number, label: string, stop = () => false): Promise<number> {
  const perTick = Math.max(1, Math.round(eventsPerSecond / 10));
  const started = Date.now();
  let sent = 0;
  for (let tick = 0; Date.now() - started < durationMs && !stop(); tick++) {
    const matches = Array.from({ length: perTick }, (_, i) => ({ nodes: [`${label}-${started}-${tick}-${i}`] }));
    await api.call('POST', `/api/admin/steady/alerts/${alertId}/matches`, { matches });
    sent += perTick;
    progress(`${label}: ${sent} events`);
    const wait = started + (tick + 1) * 100 - Date.now();
    if (wait > 0) await sleep(wait);
  }
  return sent;
}
