import type { SettingsStore } from '../settings/settings-store.js';
import { featureDisabled } from '../errors.js';

/** A preHandler for every webhook operation: `feature_disabled` while webhooks.enabled is false. */
export function requireWebhooksEnabled(settings: SettingsStore): () => Promise<void> {
  return async () => {
    if (!settings.webhooks.enabled) throw featureDisabled();
  };
}
