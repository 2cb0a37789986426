import { Type, type Static } from 'typebox';

/**
 * The settings' API shapes, declared once: the routes answer them, the types are derived from them, and the console
 * imports the types. The rules of each option are its validator's (webhook-settings.ts): they say more than a schema.
 */

/** A CRON expression croner accepts (5 fields, or 6 with seconds): made only by the settings' validator. */
export type CronExpression = string & { readonly __brand: 'CronExpression' };
/** When a recurring task runs: on a CRON expression, or never. */
export type Schedule = 'none' | CronExpression;
/** When deliveries go out: also `immediate`, as soon as the transaction that made them due commits. */
export type DeliveryFrequency = Schedule | 'immediate';

export const WebhookSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    deliveryFrequency: Type.Unsafe<DeliveryFrequency>(Type.String()),
    cleanupFrequency: Type.Unsafe<Schedule>(Type.String()),
    deliveryRetentionDelayMs: Type.Integer(),
    failedDeliveryRetentionDelayMs: Type.Integer(),
    // Alert runs older than this are removed on cleanupFrequency, but the newest ALERT_RUNS_KEPT of each alert.
    alertRunRetentionDelayMs: Type.Integer(),
    // Audit log entries older than this are removed on cleanupFrequency (audit/audit-purge.ts).
    auditRetentionDelayMs: Type.Integer(),
    requestTimeoutMs: Type.Integer(),
    retryScheduleMs: Type.Array(Type.Integer()),
    // A webhook whose deliveries have all failed for this long (at least one ended `failed`, none sent) is disabled
    // automatically; 0 never disables one. Any value from 1000 ms up, so tests and demos can use seconds.
    autoDisableAfterMs: Type.Integer(),
  },
  { $id: 'WebhookSettings', description: 'The webhooks section of the settings (Admin only)' },
);

/** The `webhooks` settings section (docs/api.md, Settings). */
export type WebhookSettings = Static<typeof WebhookSettingsSchema>;

export const SettingsSchema = Type.Object(
  { url: Type.String(), webhooks: Type.Optional(WebhookSettingsSchema) },
  { $id: 'Settings', description: 'The settings a caller may see' },
);
export type Settings = Static<typeof SettingsSchema>;
