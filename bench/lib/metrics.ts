import { request } from 'undici';

/** The service's claim timer (src/metrics/metrics.ts): every claim, empty ones included, is observed. */
export const CLAIM_HISTOGRAM = 'webhook_claim_duration_seconds';

export interface HistogramTotals {
  sum: number;
  count: number;
}

/**
 * The totals of histogram `name` from the service's GET /metrics (open on loopback), or undefined when the service
 * does not expose it (a version without it).
 */
export async function readHistogram(baseUrl: string, name: string): Promise<HistogramTotals | undefined> {
  const response = await request(`${baseUrl}/metrics`);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}`);
  const value = (suffix: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}_${suffix} `) || l.startsWith(`${name}_${suffix}{`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const sum = value('sum');
  const count = value('count');
  return sum === undefined || count === undefined ? undefined : { sum, count };
}
