import { readWebhookSettings, SettingsStore } from '../settings/settings-store.js';
import { validateWebhookOption, WEBHOOK_OPTIONS, type WebhookSettings } from '../settings/webhook-settings.js';
import { withAdminDatabase } from './admin-database.js';
import { expectArgs, parseArgs, UsageError } from './usage.js';

/**
 * `config get [option]` and `config set <option> <value>`: the stored webhooks settings, as GET and POST
 * /api/config read and change them. `set` checks the value with the API's rules and stores it the API's way
 * (SettingsStore.update: under a row lock, then NOTIFY), so running processes on PostgreSQL follow it at once.
 */
export async function config(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const [action, ...rest] = args;
  const { positional } = parseArgs(rest);
  if (action === 'get') {
    expectArgs(positional, 0, 1, 'config get [option]');
    const option = positional[0] === undefined ? undefined : optionName(positional[0]);
    await withAdminDatabase('GET /api/config, as an admin', async (db) => {
      const settings = await readWebhookSettings(db);
      print(JSON.stringify(option === undefined ? settings : settings[option], null, option === undefined ? 2 : undefined));
    });
  } else if (action === 'set') {
    expectArgs(positional, 2, 2, 'config set <option> <value>');
    const option = optionName(positional[0]!);
    const value = validateWebhookOption(option, parseValue(positional[1]!));
    await withAdminDatabase('POST /api/config {"path": "webhooks.<option>", "configuration": <value>}, as an admin', async (db) => {
      const store = await SettingsStore.open(db);
      try {
        const next = await store.update((current) => ({ ...current, [option]: value }));
        print(`webhooks.${option} = ${JSON.stringify(next[option])}`);
      } finally {
        await store.close();
      }
    });
  } else {
    throw new UsageError('usage: alert-webhooks config get [option] | config set <option> <value>');
  }
}

/** `deliveryFrequency` or `webhooks.deliveryFrequency`, as POST /api/config's path names it. */
function optionName(text: string): keyof WebhookSettings {
  const option = text.startsWith('webhooks.') ? text.slice('webhooks.'.length) : text;
  // Not an option: the API's own refusal, which names them all.
  if (!(WEBHOOK_OPTIONS as string[]).includes(option)) validateWebhookOption(option, undefined);
  return option as keyof WebhookSettings;
}

/** JSON when it is JSON (`false`, `5000`, `[1000, 2000]`), else the text itself (a CRON expression, `none`). */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
