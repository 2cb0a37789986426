import type { WebhookSettings } from '../settings/webhook-settings.js';
import type { DeliveryEngine } from './engine.js';

/**
 * For readiness, on a process that runs the schedules: why they are not running as the stored settings say, or
 * undefined when they are. Each schedule must be on the pattern the settings give it (`none` while webhooks are
 * disabled, which is ready: nothing is meant to run) and its timer set; `immediate` must also be listening for
 * wake-ups (a LISTEN on PostgreSQL, answered once). An engine stopped (the process is stopping),
 * or a settings change the engine did not follow, is not ready.
 */
export function schedulesProblem(engine: Pick<DeliveryEngine, 'delivery' | 'cleanup'>, settings: Readonly<WebhookSettings>): string | undefined {
  const expected = {
    delivery: settings.enabled ? settings.deliveryFrequency : 'none',
    cleanup: settings.enabled ? settings.cleanupFrequency : 'none',
  };
  for (const task of [engine.delivery, engine.cleanup]) {
    const pattern = expected[task.name as keyof typeof expected];
    if (task.pattern !== pattern || !task.armed) return `the ${task.name} schedule is not running`;
  }
  return undefined;
}
