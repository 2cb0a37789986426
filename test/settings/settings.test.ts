import { describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/settings/webhook-settings.js';
import { useTestService } from '../support/test-service.js';

describe('settings (docs/api.md, Settings)', () => {
  const t = useTestService();

  it('shows the defaults to an Admin, and no webhooks section to others', async () => {
    const response = await t.admin.get('/api/config');
    expect(response.status).toBe(200);
    expect(response.body.webhooks).toEqual({
      enabled: true,
      deliveryFrequency: '* * * * *',
      cleanupFrequency: '0 0 * * *',
      deliveryRetentionDelayMs: 86400000,
      failedDeliveryRetentionDelayMs: 604800000,
      alertRunRetentionDelayMs: 2592000000,
      auditRetentionDelayMs: 31536000000,
      requestTimeoutMs: 10000,
      retryScheduleMs: [60000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
      autoDisableAfterMs: 432000000,
    });
    expect((await t.anonymous.get('/api/config')).body.webhooks).toBeUndefined();
  });

  it('round-trips the whole section and single options, and signals the change', async () => {
    const changes: unknown[] = [];
    const stop = t.service.settings.onChange((s) => changes.push(s));
    const section = {
      enabled: false,
      deliveryFrequency: '*/5 * * * * *',
      cleanupFrequency: 'none',
      deliveryRetentionDelayMs: 0,
      failedDeliveryRetentionDelayMs: 1000,
      alertRunRetentionDelayMs: 0,
      auditRetentionDelayMs: 86400000,
      requestTimeoutMs: 60000,
      retryScheduleMs: [],
      autoDisableAfterMs: 0,
    };
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: section })).status).toBe(204);
    expect((await t.admin.get('/api/config')).body.webhooks).toEqual(section);
    expect((await t.admin.post('/api/config', { path: 'webhooks.deliveryFrequency', configuration: '0 12 * * 1-5' })).status).toBe(204);
    expect((await t.admin.post('/api/config', { path: 'webhooks', configuration: { enabled: true } })).status).toBe(204);
    const now = (await t.admin.get('/api/config')).body.webhooks;
    expect(now).toEqual({ ...section, deliveryFrequency: '0 12 * * 1-5', enabled: true });
    expect(changes).toHaveLength(3);
    stop();
    const { rows } = await t.db.query<{ value: unknown }>(`SELECT value FROM settings WHERE section = 'webhooks'`);
    expect(rows[0]!.value).toEqual(now);
    await t.admin.post('/api/config', { path: 'webhooks', configuration: DEFAULT_WEBHOOK_SETTINGS });
  });

  it.each([
    ['webhooks.enabled', 'yes', 'webhooks.enabled must be a boolean (true or false)'],
    ['webhooks.deliveryFrequency', '*/61 * * * *', 'webhooks.deliveryFrequency "*/61 * * * *" is not a valid CRON expression'],
    ['webhooks.deliveryFrequency', '* * *', 'webhooks.deliveryFrequency "* * *" is not a valid CRON expression (5 fields, or 6 with seconds, "immediate", or "none"; got 3)'],
    ['webhooks.deliveryFrequency', '* * * * * * *', 'webhooks.deliveryFrequency "* * * * * * *" is not a valid CRON expression (5 fields, or 6 with seconds, "immediate", or "none"; got 7)'],
    ['webhooks.cleanupFrequency', 'sometimes', 'webhooks.cleanupFrequency "sometimes" is not a valid CRON expression'],
    ['webhooks.cleanupFrequency', 5, 'webhooks.cleanupFrequency must be a string: a CRON expression or "none"'],
    ['webhooks.deliveryRetentionDelayMs', -1, 'webhooks.deliveryRetentionDelayMs must be an integer from 0 to 315360000000, got -1'],
    ['webhooks.deliveryRetentionDelayMs', 1.5, 'webhooks.deliveryRetentionDelayMs must be an integer from 0 to 315360000000, got 1.5'],
    ['webhooks.failedDeliveryRetentionDelayMs', '10', 'webhooks.failedDeliveryRetentionDelayMs must be an integer from 0 to 315360000000, got "10"'],
    ['webhooks.alertRunRetentionDelayMs', -1, 'webhooks.alertRunRetentionDelayMs must be an integer from 0 to 315360000000, got -1'],
    ['webhooks.auditRetentionDelayMs', 315360000001, 'webhooks.auditRetentionDelayMs must be an integer from 0 to 315360000000, got 315360000001'],
    ['webhooks.auditRetentionDelayMs', '1y', 'webhooks.auditRetentionDelayMs must be an integer from 0 to 315360000000, got "1y"'],
    ['webhooks.requestTimeoutMs', 999, 'webhooks.requestTimeoutMs must be an integer from 1000 to 60000, got 999'],
    ['webhooks.requestTimeoutMs', 60001, 'webhooks.requestTimeoutMs must be an integer from 1000 to 60000, got 60001'],
    ['webhooks.retryScheduleMs', 1000, 'webhooks.retryScheduleMs must be an array of integers (milliseconds between attempts)'],
    ['webhooks.retryScheduleMs', Array(21).fill(1000), 'webhooks.retryScheduleMs must have at most 20 steps, got 21'],
    ['webhooks.retryScheduleMs', [1000, -5], 'webhooks.retryScheduleMs[1] must be an integer from 0 to 604800000, got -5'],
    ['webhooks.colour', 'blue', 'webhooks.colour is not a setting; the webhooks options are enabled, deliveryFrequency, cleanupFrequency, deliveryRetentionDelayMs, failedDeliveryRetentionDelayMs, alertRunRetentionDelayMs, auditRetentionDelayMs, requestTimeoutMs, retryScheduleMs, autoDisableAfterMs'],
    ['email', {}, 'path "email" is not a settings section this service has: use "webhooks" or "webhooks.<option>"'],
  ])('refuses %s = %j, naming the option, and changes nothing', async (path, configuration, message) => {
    const before = (await t.admin.get('/api/config')).body;
    const response = await t.admin.post('/api/config', { path, configuration });
    expect(response.status).toBe(400);
    expect(response.body.key).toBe('invalid_parameter');
    expect(response.body.message.startsWith(message)).toBe(true);
    expect((await t.admin.get('/api/config')).body).toEqual(before);
  });

  it('refuses a whole section with one bad option and applies none of it', async () => {
    const before = (await t.admin.get('/api/config')).body;
    const response = await t.admin.post('/api/config', { path: 'webhooks', configuration: { enabled: false, requestTimeoutMs: 5 } });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('webhooks.requestTimeoutMs must be an integer from 1000 to 60000, got 5');
    expect((await t.admin.get('/api/config')).body).toEqual(before);
  });

  it('needs Admin to change settings', async () => {
    expect((await t.anonymous.post('/api/config', { path: 'webhooks.enabled', configuration: false })).status).toBe(401);
  });
});
