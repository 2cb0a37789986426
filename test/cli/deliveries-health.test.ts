import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURATION_CLASSES } from '../../src/outbox/attempt-counts.js';
import { openTestDatabase, type TestDatabase } from '../support/test-service.js';
import { cli, dbEnv } from './cli-support.js';

// `alert-webhooks deliveries health` on the test file's database, closed so that the CLI process may open it: the
// counts the outcome statement keeps, as GET /api/admin/deliveries/health reads them.
describe('alert-webhooks deliveries health', () => {
  let testDb: TestDatabase;

  beforeAll(async () => {
    testDb = await openTestDatabase();
    await testDb.db.query(`INSERT INTO webhooks (url, secret) VALUES ('http://127.0.0.1:9/cli-health', 'cli-health-secret-value')`);
    // This minute and hour: 8 sent, 1 retried, 1 failed for webhook 1 and for all; the 10 attempts took 100–150 ms.
    for (const [span, slots, seconds] of [['minute', 120, 60], ['hour', 192, 3600]] as const) {
      await testDb.db.query(
        `INSERT INTO delivery_attempt_counts (webhook_id, span, slot, bucket, sent, failed, retried, durations)
         SELECT w, $1, (n % $2)::smallint, to_timestamp(n * $3), 8, 1, 1, array_fill(0, ARRAY[12]) || 10 || array_fill(0, ARRAY[$4::int - 13])
         FROM (SELECT floor(extract(epoch FROM now()) / $3)::bigint AS n) t, unnest(ARRAY[0, 1]) w`,
        [span, slots, seconds, DURATION_CLASSES],
      );
    }
    await testDb.db.close();
  });
  afterAll(async () => testDb?.dispose());

  // Each command is a process of its own that opens the database: seconds each on a busy machine.
  it('prints the buckets that had attempts and the totals, for all webhooks or one, by minute, hour or day', { timeout: 90_000 }, async () => {
    const env = dbEnv(testDb);
    const hour = await cli(['deliveries', 'health'], env);
    expect(hour.code, hour.stderr).toBe(0);
    const lines = hour.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Attempts per minute, \S+ to \S+, every webhook:$/);
    expect(lines[1]).toMatch(/^from\s+sent\s+retried\s+failed$/);
    expect(lines[2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z\s+8\s+1\s+1$/);
    expect(lines.at(-1)).toBe('Total: 10 attempts, 8 sent, 1 retried, 1 failed; success rate 80.0%, p95 148 ms');

    const week = await cli(['deliveries', 'health', '--range', 'week', '--webhook', '1'], env);
    expect(week.code, week.stderr).toBe(0);
    expect(week.stdout).toContain('Attempts per UTC day');
    expect(week.stdout).toContain(', webhook 1:');
    expect(week.stdout).toMatch(/T00:00:00\.000Z\s+8\s+1\s+1\n/);
  });

  it('refuses a wrong range (exit 2) and an unknown webhook (exit 1)', { timeout: 90_000 }, async () => {
    const env = dbEnv(testDb);
    const month = await cli(['deliveries', 'health', '--range', 'month'], env);
    expect(month.code).toBe(2);
    expect(month.stderr).toContain('--range must be one of hour, day, week, got "month"');
    const unknown = await cli(['deliveries', 'health', '--webhook', '999'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('webhook 999 was not found');
  });
});
