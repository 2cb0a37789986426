import { readWebhookSettings } from '../settings/settings-store.js';
import { featureDisabled, notFound } from '../errors.js';
import { redeliverFailed } from '../outbox/redeliver-many.js';
import { listWebhooks } from '../webhooks/webhooks.js';
import { withAdminDatabase } from './admin-database.js';
import { parseArgs, parseWebhookId, UsageError } from './usage.js';

const USAGE = 'deliveries redeliver --failed [--since ISO] [--webhook N]';

/**
 * `deliveries redeliver --failed [--since ISO] [--webhook N]`: after a receiver's outage, every delivery that ended
 * failed (since ISO, of webhook N) is made pending and due now, in batches, as the redeliver of one delivery does it
 * (src/outbox/redeliver-many.ts). Safe while workers run; running it twice redelivers nothing twice.
 */
export async function deliveriesRedeliver(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const { positional, options } = parseArgs(args, ['failed'], ['since', 'webhook']);
  if (positional.length > 0 || !options.has('failed')) throw new UsageError(`usage: alert-webhooks ${USAGE} (--failed: only failed deliveries are redelivered in bulk)`);
  const since = options.has('since') ? parseInstant(String(options.get('since'))) : undefined;
  const webhookId = options.has('webhook') ? parseWebhookId(String(options.get('webhook'))) : undefined;

  await withAdminDatabase('POST /api/admin/webhooks/:id/deliveries/:deliveryId/redeliver, one delivery at a time', async (db) => {
    if (!(await readWebhookSettings(db)).enabled) throw featureDisabled();
    if (webhookId !== undefined && (await listWebhooks(db, webhookId)).length === 0) throw notFound('webhook', webhookId);
    const count = await redeliverFailed(db, { webhookIds: webhookId === undefined ? undefined : [webhookId], since });
    const scope = `${webhookId === undefined ? '' : ` of webhook ${webhookId}`}${since ? ` failed since ${since.toISOString()}` : ''}`;
    print(`${count} failed deliver${count === 1 ? 'y' : 'ies'}${scope} made pending and due now.`);
  });
}

/** An ISO 8601 date or date and time (`2026-05-01`, `2026-05-01T10:00:00Z`, with an offset). */
function parseInstant(text: string): Date {
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) || Number.isNaN(date.getTime())) {
    throw new UsageError(`--since must be an ISO 8601 date or date and time (2026-05-01T10:00:00Z), got "${text}"`);
  }
  return date;
}
