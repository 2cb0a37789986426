import { Cron } from 'croner';

// The next times an alert's CRON fires, as the admin types it: croner is what the service schedules with, so what the
// form shows is what the service will do (in this browser's time zone; the service runs in its own).

export type CronReading = { times: Date[] } | { error: string };

/** The next `count` times of `expression` after `from`; an error that says why when it is not a CRON the service takes. */
export function nextRuns(expression: string, count = 3, from = new Date()): CronReading {
  const text = expression.trim();
  const fields = text.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { error: `5 fields, or 6 with seconds (this has ${fields})` };
  try {
    const times = new Cron(text, { paused: true }).nextRuns(count, from);
    return times.length ? { times } : { error: 'it never fires: no date matches it' };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}
