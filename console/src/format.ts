// Times and durations as people read them.

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** "3 s ago", "5 min ago", "2 h ago", else the date. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (seconds < 0) return `in ${formatDuration(-seconds * 1000)}`;
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatTime(iso);
}

const UNITS: [number, string, string][] = [
  [7 * 86_400_000, 'week', 'weeks'],
  [86_400_000, 'day', 'days'],
  [3_600_000, 'h', 'h'],
  [60_000, 'min', 'min'],
  [1000, 's', 's'],
];

/** 86400000 → "1 day", 90000 → "1 min 30 s", 250 → "250 ms". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const parts: string[] = [];
  let rest = Math.round(ms);
  for (const [size, one, many] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${n} ${n === 1 ? one : many}`);
      rest -= n * size;
    }
    if (parts.length === 2) break;
  }
  if (rest > 0 && parts.length < 2 && rest < 1000) parts.push(`${rest} ms`);
  return parts.join(' ');
}

/** A column or property value as text: null and absent as a dash, objects as JSON. */
export const formatValue = (value: unknown) => (value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));
