/** The harness's progress line on stderr (one line rewritten on a TTY, a line every 5 s otherwise) and its waits. */
const startedAt = Date.now();
let lastProgress = 0;

export function progress(text: string, force = false): void {
  const line = `[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${text}`;
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
  else if (force || Date.now() - lastProgress > 5000) {
    process.stderr.write(`${line}\n`);
    lastProgress = Date.now();
  }
}

export function phase(text: string): void {
  if (process.stderr.isTTY) process.stderr.write('\n');
  progress(text, true);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it answers true; a string is its state, shown as progress. */
export async function waitUntil(what: string, check: () => Promise<boolean | string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await check();
    if (state === true) return;
    if (typeof state === 'string') progress(`${what}: ${state}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${typeof state === 'string' ? ` (${state})` : ''}`);
    await sleep(100);
  }
}

export const round = (value: number, digits: number) => Number(value.toFixed(digits));

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The median of `values` (the mean of the two middle ones for an even count), rounded to a whole number. */
export function median(values: readonly number[]): number {
  return Math.round(exactMedian(values));
}

/**
 * The median, not rounded: for a ratio of two medians of a few tens of ms, where whole numbers moved the ratio by up
 * to ±0.02 (27 and 37 ms could be 26.5 and 37.4).
 */
export function exactMedian(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
}
