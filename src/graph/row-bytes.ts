/**
 * How large a row of an answer is, roughly, and the most one may hold: the embedded engine's Kùzu process bounds its
 * rows with this bound and message (its own measure reads a property's scalar in place), and the Bolt adapter
 * (bolt-graph.ts) with both, so a row that one engine refuses the other refuses too.
 */

/** The most a row may hold: past it the query fails with `bad_graph_request` naming the row. */
export const MAX_ROW_BYTES = 16 * 1024 * 1024;

/** A value's size, roughly (strings by length, bytes by length, every other scalar 8 bytes), without encoding it. */
export function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 8;
  if (value === null || typeof value !== 'object') return 8;
  if (ArrayBuffer.isView(value)) return value.byteLength + 16;
  let total = 16;
  if (Array.isArray(value)) {
    for (const item of value) total += approximateBytes(item);
    return total;
  }
  for (const key in value) total += key.length + approximateBytes((value as Record<string, unknown>)[key]);
  return total;
}

/** The refusal of a row over MAX_ROW_BYTES, as the embedded engine words it; undefined for a row within it. */
export function oversizedRowMessage(bytes: number, rowNumber: number): string | undefined {
  if (bytes <= MAX_ROW_BYTES) return undefined;
  return `row ${rowNumber} of the answer holds about ${Math.round(bytes / 1024 / 1024)} MB, over the ${MAX_ROW_BYTES / 1024 / 1024} MB a row may hold: return fewer or smaller values`;
}
