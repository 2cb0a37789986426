import { notFound } from '../errors.js';
import { readHealthOverTime } from '../outbox/health-over-time.js';
import { HEALTH_RANGE_NAMES, type HealthRange } from '../outbox/schemas.js';
import { listWebhooks } from '../webhooks/webhooks.js';
import { withAdminDatabase } from './admin-database.js';
import { table } from './webhooks-list.js';
import { expectArgs, parseArgs, parseWebhookId, UsageError } from './usage.js';

const USAGE = 'deliveries health [--range hour|day|week] [--webhook N]';
const BUCKET_NAMES: Record<HealthRange, string> = { hour: 'minute', day: 'hour', week: 'UTC day' };

/**
 * `deliveries health`: the attempt outcomes of the last hour, day or week as GET /api/admin/deliveries/health answers
 * them, one line per bucket that had any (UTC), then the window's totals, success rate and p95 attempt duration.
 */
export async function deliveriesHealth(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const { positional, options } = parseArgs(args, [], ['range', 'webhook']);
  expectArgs(positional, 0, 0, USAGE);
  const range = String(options.get('range') ?? 'hour');
  if (!(HEALTH_RANGE_NAMES as readonly string[]).includes(range)) throw new UsageError(`--range must be one of ${HEALTH_RANGE_NAMES.join(', ')}, got "${range}"`);
  const webhookId = options.has('webhook') ? parseWebhookId(String(options.get('webhook'))) : null;

  await withAdminDatabase('GET /api/admin/deliveries/health', async (db) => {
    if (webhookId !== null && (await listWebhooks(db, webhookId)).length === 0) throw notFound('webhook', webhookId);
    const health = await readHealthOverTime(db, range as HealthRange, webhookId);
    const of = webhookId === null ? 'every webhook' : `webhook ${webhookId}`;
    print(`Attempts per ${BUCKET_NAMES[health.range]}, ${health.from} to ${health.to}, ${of}:`);
    const busy = health.buckets.filter((b) => b.sent + b.retried + b.failed > 0);
    if (busy.length === 0) print('none');
    else for (const line of table(['from', 'sent', 'retried', 'failed'], busy.map((b) => [b.start, String(b.sent), String(b.retried), String(b.failed)]))) print(line);
    const { attempts, sent, retried, failed, successRate, p95DurationMs } = health.totals;
    const rate = successRate === null ? '—' : `${(successRate * 100).toFixed(1)}%`;
    const p95 = p95DurationMs === null ? '—' : `${p95DurationMs} ms`;
    print(`Total: ${attempts} attempts, ${sent} sent, ${retried} retried, ${failed} failed; success rate ${rate}, p95 ${p95}`);
  });
}
