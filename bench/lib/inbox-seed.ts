/**
 * A year of cases written straight into the database with SQL, for the case inbox's bench (bench/inbox.ts) and its
 * plan test (test/alerts/case-inbox-plan.test.ts): reporting a million matches through the API would take the bench
 * minutes and measure the match report, not the inbox.
 *
 * `sources` data sources of `alerts / sources` alerts each (two columns: `amount`, a number, and `country`, a string);
 * cases over the last 365 days, ids following time, each of an alert picked by a hash of its id; updated 0 to 1,000
 * hours after creation (not after now); statuses 60% unconfirmed, 10% in-progress, 20% dismissed, 10% confirmed; 10%
 * assigned to one of `users` users; one match each, whose columns are `amount` = id % 1000 and a country of four.
 * Alerts, users and groups are numbered after any already there.
 */
import type { Queryable } from '../../src/db/database.js';

export interface InboxSeedPlan {
  cases: number;
  alerts: number;
  sources: number;
  users: number;
  /** Rows per statement: PGlite's memory stays flat. */
  chunk?: number;
  onProgress?: (done: number) => void;
}

export interface InboxSeed {
  sourceKeys: string[];
  /** Every alert's id, by source: alertIds[0] are the first source's. */
  alertIds: number[][];
  userIds: number[];
}

export const INBOX_SEED_COLUMNS = [
  { type: 'number', columnTitle: 'Amount', columnName: 'amount' },
  { type: 'string', columnTitle: 'Country', columnName: 'country' },
] as const;

// Non-negative hashes of a case's id, one per property, so each property is independent of the others.
const hash = (salt: number) => `(hashint4(g + ${salt}) & 2147483647)`;

export async function seedInbox(db: Queryable, plan: InboxSeedPlan): Promise<InboxSeed> {
  const chunk = plan.chunk ?? 100_000;
  const perSource = Math.ceil(plan.alerts / plan.sources);
  const sourceKeys = Array.from({ length: plan.sources }, (_, i) => `inbox-${i + 1}`);
  await db.query(`INSERT INTO data_sources (key, name) SELECT k, 'Inbox ' || k FROM unnest($1::text[]) k`, [sourceKeys]);
  const { rows: alertRows } = await db.query<{ id: number; source_key: string }>(
    `INSERT INTO alerts (source_key, title, columns)
     SELECT ($1::text[])[1 + (a - 1) / $2], 'Inbox alert ' || a, $3::jsonb FROM generate_series(1, $4::int) a
     RETURNING id, source_key`,
    [sourceKeys, perSource, JSON.stringify(INBOX_SEED_COLUMNS), plan.alerts],
  );
  const alertIds = sourceKeys.map((key) => alertRows.filter((row) => row.source_key === key).map((row) => row.id).sort((a, b) => a - b));
  const { rows: userRows } = await db.query<{ id: number }>(
    `INSERT INTO users (username, email, password_hash)
     SELECT 'inbox-user-' || g || '-' || substr(md5(random()::text), 1, 8), 'inbox-' || g || '-' || substr(md5(random()::text), 1, 8) || '@example.com', 'not a hash'
     FROM generate_series(1, $1::int) g RETURNING id`,
    [plan.users],
  );
  const userIds = userRows.map((row) => row.id).sort((a, b) => a - b);
  const everyAlert = alertRows.map((row) => row.id).sort((a, b) => a - b);
  const { rows } = await db.query<{ base: number }>('SELECT coalesce(max(id), 0) AS base FROM cases');
  const base = Number(rows[0]!.base);
  for (let from = 1; from <= plan.cases; from += chunk) {
    const to = Math.min(plan.cases, from + chunk - 1);
    // Case g is created at now() - 365 days + g/cases of the year; every other property follows from a hash of g.
    await db.query(
      `WITH created AS (
         INSERT INTO cases (id, alert_id, hash, nodes, edges, status, match_count, created_at, updated_at, assigned_user_id)
         SELECT $3 + g, ($4::int[])[1 + ${hash(1)} % cardinality($4::int[])], md5(($3 + g)::text), ARRAY['n' || g], '{}',
                (ARRAY['unconfirmed','unconfirmed','unconfirmed','unconfirmed','unconfirmed','unconfirmed','in-progress','dismissed','dismissed','confirmed'])[1 + ${hash(2)} % 10],
                1, t.created_at, LEAST(now(), t.created_at + (${hash(3)} % 1000) * interval '1 hour'),
                CASE WHEN ${hash(4)} % 10 = 0 THEN ($5::int[])[1 + ${hash(5)} % cardinality($5::int[])] END
         FROM generate_series($1::int, $2::int) g
         CROSS JOIN LATERAL (SELECT now() - interval '365 days' + (g::float8 / $6) * interval '365 days' AS created_at) t
         RETURNING id, alert_id, created_at
       )
       INSERT INTO alert_matches (alert_id, hash, case_id, nodes, edges, columns, created_at)
       SELECT alert_id, md5(id::text), id, ARRAY['n' || id], '{}',
              jsonb_build_object('amount', id % 1000, 'country', (ARRAY['FR','DE','US','GB'])[1 + id % 4]), created_at
       FROM created`,
      [from, to, base, everyAlert, userIds, plan.cases],
    );
    plan.onProgress?.(to);
  }
  // Past the seeded ids: a case the service opens afterwards gets a fresh one.
  await db.query(`SELECT setval(pg_get_serial_sequence('cases', 'id'), (SELECT max(id) FROM cases))`);
  return { sourceKeys, alertIds, userIds };
}

/**
 * The secondary indexes of `tables` dropped (those that back no constraint), and a function that makes them again:
 * a bulk load into a table without them, then each index built once, is several times faster than the load through them.
 */
export async function withoutSecondaryIndexes(db: Queryable, tables: readonly string[]): Promise<() => Promise<void>> {
  const { rows } = await db.query<{ name: string; definition: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     WHERE t.relname = ANY($1::text[]) AND t.relnamespace = 'public'::regnamespace
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
    [tables],
  );
  for (const row of rows) await db.query(`DROP INDEX "${row.name}"`);
  return async () => {
    for (const row of rows) await db.query(row.definition);
  };
}
