/**
 * Seeds rows straight into the database for the cleanup figure (`tsx bench/lib/seed.ts sent <count>`), with
 * the service stopped (the embedded database admits one process). Same env as the service: DATABASE_URL or DATA_DIR.
 */
import { createDatabase } from '../../src/db/database.js';

const [kind, countArg] = process.argv.slice(2);
if (kind !== 'sent' || !countArg) throw new Error('usage: seed.ts sent <count>');
const count = Number(countArg);
const db = await createDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? './data' });
try {
  const { rows } = await db.query<{ event_id: number; webhook_id: number }>('SELECT event_id, webhook_id FROM webhook_deliveries LIMIT 1');
  if (!rows[0]) throw new Error('seed needs one delivery to copy its event and webhook');
  // Sent two days ago: past the default one-day retention. In chunks, so PGlite's memory stays flat.
  for (let done = 0; done < count; done += 100_000) {
    await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, status, attempts, sent_date, finished_at, last_attempt_at, response_status)
       SELECT $1, $2, 'sent', 1, now() - interval '2 days', now() - interval '2 days', now() - interval '2 days', 204
       FROM generate_series(1, $3)`,
      [rows[0].webhook_id, rows[0].event_id, Math.min(100_000, count - done)],
    );
  }
  // As autovacuum would have by the time a day's deliveries are past retention.
  await db.query('ANALYZE webhook_deliveries');
  console.log(JSON.stringify({ seeded: count }));
} finally {
  await db.close();
}
