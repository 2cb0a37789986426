import { Cron } from 'croner';
import { invalidParameter } from '../errors.js';

/** An alert's CRON as LKE takes it: 5 fields, or 6 with seconds; one that never fires (`0 0 31 2 *`) is refused. */
export function checkAlertCron(value: string): string {
  const cron = value.trim();
  const fields = cron.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw invalidParameter(`cron "${value}" is not a valid CRON expression (5 fields, or 6 with seconds; got ${fields})`, 'cron');
  let next: Date | null;
  try {
    next = new Cron(cron, { paused: true }).nextRun();
  } catch (err) {
    throw invalidParameter(`cron "${value}" is not a valid CRON expression (${(err as Error).message})`, 'cron');
  }
  if (!next) throw invalidParameter(`cron "${value}" never fires: no date matches it`, 'cron');
  return cron;
}

/** The first time `cron` fires after `after` (missed ones are not made up for: an alert runs once after downtime). */
export function nextRunAfter(cron: string, after: Date): Date | null {
  return new Cron(cron, { paused: true }).nextRun(after);
}
