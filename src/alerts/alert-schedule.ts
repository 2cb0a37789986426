import { Cron } from 'croner';
import { invalidParameter } from '../errors.js';

/**
 * How many of a CRON's next firings are compared with the least interval when an alert is saved. A CRON's closest
 * firings come back every hour, day, week or year; a firing this far ahead still checks seconds, minutes and the
 * common lists (`0,1 * * * *`). The schedule enforces the interval whatever this check misses (nextScheduledRun).
 */
const FIRINGS_CHECKED = 500;

/**
 * An alert's CRON as LKE takes it: 5 fields, or 6 with seconds; one that never fires (`0 0 31 2 *`) is refused, and
 * so is one that fires twice within `minIntervalMs` (ALERTS_MIN_INTERVAL_MS).
 */
export function checkAlertCron(value: string, minIntervalMs = 0): string {
  const cron = value.trim();
  const fields = cron.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw invalidParameter(`cron "${value}" is not a valid CRON expression (5 fields, or 6 with seconds; got ${fields})`, 'cron');
  let schedule: Cron;
  let next: Date | null;
  try {
    schedule = new Cron(cron, { paused: true });
    next = schedule.nextRun();
  } catch (err) {
    throw invalidParameter(`cron "${value}" is not a valid CRON expression (${(err as Error).message})`, 'cron');
  }
  if (!next) throw invalidParameter(`cron "${value}" never fires: no date matches it`, 'cron');
  if (minIntervalMs > 0) {
    for (let i = 0; i < FIRINGS_CHECKED; i++) {
      const after: Date | null = schedule.nextRun(next);
      if (!after) break;
      if (after.getTime() - next.getTime() < minIntervalMs) {
        throw invalidParameter(
          `cron "${value}" fires ${describeGap(after.getTime() - next.getTime())} apart (${next.toISOString()}, then ${after.toISOString()}): an alert runs at most once every ` +
            `${describeGap(minIntervalMs)} (ALERTS_MIN_INTERVAL_MS)`,
          'cron',
        );
      }
      next = after;
    }
  }
  return cron;
}

function describeGap(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

/** The first time `cron` fires after `after` (missed ones are not made up for: an alert runs once after downtime). */
export function nextRunAfter(cron: string, after: Date): Date | null {
  return new Cron(cron, { paused: true }).nextRun(after);
}

/**
 * The next scheduled run after one that started at `startedAt`: the CRON's first time after now that is at least
 * `minIntervalMs` after that start. A CRON saved before the bound was set (or one the save's check let through)
 * runs no more often than the bound allows: its firings within it are skipped.
 */
export function nextScheduledRun(cron: string, now: Date, startedAt: Date, minIntervalMs = 0): Date | null {
  const earliest = new Date(Math.max(now.getTime(), startedAt.getTime() + minIntervalMs - 1));
  return nextRunAfter(cron, earliest);
}
