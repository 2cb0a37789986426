import { listWebhooks, type Webhook } from '../webhooks/webhooks.js';
import { withAdminDatabase } from './admin-database.js';
import { expectArgs, parseArgs } from './usage.js';

/** `webhooks list`: the webhooks as GET /api/admin/webhooks lists them (oldest first), as a table. */
export async function webhooksList(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const { positional } = parseArgs(args);
  expectArgs(positional, 0, 0, 'webhooks list');
  await withAdminDatabase('GET /api/admin/webhooks', async (db) => {
    const webhooks = await listWebhooks(db);
    if (webhooks.length === 0) {
      print('No webhooks.');
      return;
    }
    for (const line of table(['id', 'url', 'events', 'created'], webhooks.map(row))) print(line);
  });
}

function row(webhook: Webhook): string[] {
  // `newCase@src`: an event type limited to one data source.
  const events = webhook.events.map((e) => (e.sourceKey === undefined ? e.eventType : `${e.eventType}@${e.sourceKey}`)).join(',');
  return [String(webhook.id), webhook.url, events, webhook.createdAt];
}

/** Columns padded to their widest cell, two spaces apart. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((cells) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}
