import { Cron } from 'croner';
import { invalidParameter } from '../errors.js';
import type { CronExpression, Schedule, WebhookSettings } from './schemas.js';

export type { CronExpression, DeliveryFrequency, Schedule, WebhookSettings } from './schemas.js';

export const DEFAULT_WEBHOOK_SETTINGS: Readonly<WebhookSettings> = Object.freeze({
  enabled: true,
  deliveryFrequency: '* * * * *' as CronExpression,
  cleanupFrequency: '0 0 * * *' as CronExpression,
  deliveryRetentionDelayMs: 86_400_000,
  failedDeliveryRetentionDelayMs: 604_800_000,
  // 30 days of run history; the newest runs of each alert are kept whatever their age (alerts/run-retention.ts).
  alertRunRetentionDelayMs: 2_592_000_000,
  // A year of who changed what (audit/audit-purge.ts): an audit outlives the deliveries and runs it accounts for.
  auditRetentionDelayMs: 31_536_000_000,
  requestTimeoutMs: 10_000,
  retryScheduleMs: Object.freeze([60_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]) as number[],
  // Five days, as Svix: past the default retry schedule's last attempt (about 27 h), so a receiver down over a long
  // weekend is disabled only if it is still down after it.
  autoDisableAfterMs: 432_000_000,
});

export const WEBHOOK_OPTIONS = Object.keys(DEFAULT_WEBHOOK_SETTINGS) as (keyof WebhookSettings)[];

// Ten years: far beyond any sensible retention, and still a valid PostgreSQL interval.
const MAX_RETENTION_MS = 315_360_000_000;
// One week between two attempts at most.
const MAX_RETRY_STEP_MS = 604_800_000;
const MAX_RETRY_STEPS = 20;

type Validator = (value: unknown, name: string) => unknown;

const VALIDATORS: Record<keyof WebhookSettings, Validator> = {
  enabled: (value, name) => {
    if (typeof value !== 'boolean') throw invalidParameter(`${name} must be a boolean (true or false)`, name);
    return value;
  },
  deliveryFrequency: (value, name) => (typeof value === 'string' && value.trim() === 'immediate' ? 'immediate' : validateSchedule(value, name, ', "immediate"')),
  cleanupFrequency: (value, name) => validateSchedule(value, name),
  deliveryRetentionDelayMs: (value, name) => validateInteger(value, name, 0, MAX_RETENTION_MS),
  failedDeliveryRetentionDelayMs: (value, name) => validateInteger(value, name, 0, MAX_RETENTION_MS),
  alertRunRetentionDelayMs: (value, name) => validateInteger(value, name, 0, MAX_RETENTION_MS),
  auditRetentionDelayMs: (value, name) => validateInteger(value, name, 0, MAX_RETENTION_MS),
  requestTimeoutMs: (value, name) => validateInteger(value, name, 1000, 60_000),
  retryScheduleMs: (value, name) => {
    if (!Array.isArray(value)) throw invalidParameter(`${name} must be an array of integers (milliseconds between attempts)`, name);
    if (value.length > MAX_RETRY_STEPS) throw invalidParameter(`${name} must have at most ${MAX_RETRY_STEPS} steps, got ${value.length}`, name);
    return value.map((step, i) => validateInteger(step, `${name}[${i}]`, 0, MAX_RETRY_STEP_MS));
  },
  autoDisableAfterMs: (value, name) => {
    if (value === 0) return value;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1000 || value > MAX_RETENTION_MS) {
      throw invalidParameter(`${name} must be 0 (never disable) or an integer from 1000 to ${MAX_RETENTION_MS}, got ${JSON.stringify(value)}`, name);
    }
    return value;
  },
};

function validateInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParameter(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, name);
  }
  return value;
}

/**
 * A CRON expression of 5 fields (or 6 with seconds), as croner reads it, or `none`; `others` names the other
 * words the option takes (`deliveryFrequency` also takes `immediate`, our extension: as soon as the deliveries'
 * transaction commits), for the messages.
 */
function validateSchedule(value: unknown, name: string, others = ''): Schedule {
  if (typeof value !== 'string') throw invalidParameter(`${name} must be a string: a CRON expression${others} or "none"`, name);
  const expression = value.trim();
  if (expression === 'none') return expression;
  const fields = expression.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw invalidParameter(`${name} "${value}" is not a valid CRON expression (5 fields, or 6 with seconds${others}, or "none"; got ${fields})`, name);
  }
  let cron: Cron;
  try {
    cron = new Cron(expression, { paused: true });
  } catch (err) {
    throw invalidParameter(`${name} "${value}" is not a valid CRON expression (${(err as Error).message})`, name);
  }
  // Valid but matching no date (`0 0 31 2 *`): nothing would ever run, and readiness would answer 503 for it.
  if (cron.nextRun() === null) throw invalidParameter(`${name} "${value}" never fires (no date matches it): give a schedule that runs, or "none"`);
  return expression as CronExpression;
}

/**
 * Applies `patch` (some options of the section) to `current` and returns the new whole section, or throws
 * `invalid_parameter` naming the first bad option. Never partially applies.
 */
export function applyWebhookSettingsPatch(current: WebhookSettings, patch: unknown, prefix = 'webhooks'): WebhookSettings {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidParameter(`configuration must be an object of ${prefix} options (${WEBHOOK_OPTIONS.join(', ')})`, 'configuration');
  }
  const next: Record<string, unknown> = { ...current };
  for (const [option, value] of Object.entries(patch)) {
    next[option] = validateWebhookOption(option, value, prefix);
  }
  return next as unknown as WebhookSettings;
}

export function validateWebhookOption(option: string, value: unknown, prefix = 'webhooks'): unknown {
  const validate = VALIDATORS[option as keyof WebhookSettings];
  if (!Object.hasOwn(VALIDATORS, option) || !validate) {
    throw invalidParameter(`${prefix}.${option} is not a setting; the webhooks options are ${WEBHOOK_OPTIONS.join(', ')}`, `${prefix}.${option}`);
  }
  return validate(value, `${prefix}.${option}`);
}

/** What is stored may predate an option: fill in defaults, drop what is no longer an option. */
export function normaliseStoredSettings(stored: unknown): WebhookSettings {
  const source = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const option of WEBHOOK_OPTIONS) {
    settings[option] = option in source ? source[option] : structuredClone(DEFAULT_WEBHOOK_SETTINGS[option]);
  }
  return settings as unknown as WebhookSettings;
}
