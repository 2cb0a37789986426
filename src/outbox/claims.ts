import { integerArray, jsonTextArray, nullableIntegerArray, textArray } from '../db/array-literals.js';
import { namedStatement, type Queryable } from '../db/database.js';
import { COUNT_ATTEMPTS_CTE } from './attempt-counts.js';
import type { AttemptLogEntry } from './read-model.js';

/** A delivery claimed by this process: its lease is `leaseToken` until completed or released. */
export interface ClaimedDelivery {
  id: number;
  webhookId: number;
  attempts: number;
  leaseToken: number;
  isPing: boolean;
  payload: string;
  /** The webhook's version when claimed: a worker reloads its cached endpoint when this moved (see EndpointCache). */
  webhookVersion: number;
}

/** The outcome of one attempt, to be written with others in one statement. */
export interface AttemptRecord {
  id: number;
  leaseToken: number;
  status: 'pending' | 'sent' | 'failed';
  /** Epoch ms; only when pending. */
  nextAttemptAt: number | null;
  attemptedAt: number;
  responseStatus: number | null;
  error: string | null;
  logEntry: AttemptLogEntry;
}

export interface ClaimRequest {
  /** At most this many deliveries in all. */
  limit: number;
  /** How long the claim is held before another process may take the rows. */
  leaseMs: number;
  /** Webhooks with no room in this process: none of theirs is claimed. */
  excludedWebhookIds?: readonly number[] | undefined;
  /** At most this many of one webhook (default: `limit`). */
  perWebhook?: number | undefined;
  /** The last webhook served: those after it go first (default 0: in id order). */
  turnAfter?: number | undefined;
}

/**
 * Claims due deliveries in one statement. Webhooks take turns (those after `turnAfter` first); for each enabled
 * webhook not in `excludedWebhookIds` (no room here), up to `perWebhook` of its due deliveries, oldest first, are
 * locked with
 * FOR UPDATE SKIP LOCKED (so concurrent workers never claim the same row), until `limit` in all. The attempt is
 * counted now (a crash mid-attempt still counts), and a lease taken in `locked_until`: if this process dies, the
 * row is due again when the lease ends. Each delivery comes with its webhook's version as the walk read it, so a
 * change of the webhook (its URL, its secret) reaches the worker with the first claim after it, in any process.
 * A disabled webhook is left out of the walk: its deliveries wait, due, until it is enabled again.
 *
 * The walk visits only webhooks with pending deliveries, found in the due index itself (see CLAIM_DUE_SQL), so its
 * cost follows the busy webhooks and never the number of webhooks.
 */
export async function claimDueDeliveries(db: Queryable, claim: ClaimRequest): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(CLAIM_DUE, claimParameters(claim));
  return rows;
}

/** The parameters of CLAIM_DUE_SQL for `claim`, defaults applied. */
export function claimParameters(claim: ClaimRequest): unknown[] {
  const { limit, leaseMs, excludedWebhookIds = [], perWebhook = limit, turnAfter = 0 } = claim;
  return [limit, leaseMs, excludedWebhookIds, perWebhook, turnAfter];
}

/**
 * The claim (exported so a test can EXPLAIN the real statement). `busy` lists the webhooks that have pending
 * deliveries, in turn order, by a skip scan of the due index (webhook_id, next_attempt_at WHERE pending): each
 * step is one descent to the first entry of the next webhook id, so it costs one probe per busy webhook and none
 * per idle one; it runs from `turnAfter` to the end, then wraps around from the start up to `turnAfter`. Both
 * recursions are read lazily (the claim stops at `limit`), and `busy`'s order is the walk's: a UNION ALL appends its
 * second branch after the first, and the nested loops below keep their outer order. Each webhook is then checked
 * (enabled, not excluded) by its primary key, and its due rows probed. The webhook's check is a LIMIT 1 subquery so
 * it stays a per-webhook probe: flattened into a join, the planner may hash all the webhooks instead. Walking every
 * webhook instead cost 11–17 ms a claim with 10,000 webhooks (bench/README.md, "The claim").
 *
 * The payloads are read by a probe per claimed delivery (a LIMIT 1 lateral, which the planner cannot turn into a
 * join): as a join, the planner hashed the whole webhook_events table for 256 rows (bench/README.md, "The claim").
 */
export const CLAIM_DUE_SQL = `WITH RECURSIVE after_turn AS (
     (SELECT webhook_id AS id FROM webhook_deliveries WHERE status = 'pending' AND webhook_id > $5 ORDER BY webhook_id LIMIT 1)
     UNION ALL
     SELECT (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' AND webhook_id > a.id ORDER BY webhook_id LIMIT 1)
     FROM after_turn a WHERE a.id IS NOT NULL
   ), up_to_turn AS (
     (SELECT webhook_id AS id FROM webhook_deliveries WHERE status = 'pending' AND webhook_id <= $5 ORDER BY webhook_id LIMIT 1)
     UNION ALL
     SELECT (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' AND webhook_id > u.id AND webhook_id <= $5 ORDER BY webhook_id LIMIT 1)
     FROM up_to_turn u WHERE u.id IS NOT NULL
   ), busy AS (
     SELECT id FROM after_turn WHERE id IS NOT NULL
     UNION ALL
     SELECT id FROM up_to_turn WHERE id IS NOT NULL
   ), due AS (
     SELECT d.id, w.version FROM busy b
     CROSS JOIN LATERAL (
       SELECT version FROM webhooks WHERE id = b.id AND enabled LIMIT 1
     ) w CROSS JOIN LATERAL (
       SELECT id FROM webhook_deliveries
       WHERE webhook_id = b.id AND status = 'pending' AND next_attempt_at <= now()
         AND (locked_until IS NULL OR locked_until <= now())
       ORDER BY next_attempt_at
       LIMIT $4
       FOR UPDATE SKIP LOCKED
     ) d
     WHERE b.id <> ALL($3::int[])
     LIMIT $1
   ), claimed AS (
     UPDATE webhook_deliveries d
     SET attempts = d.attempts + 1, lease_token = d.lease_token + 1, locked_until = now() + $2 * interval '1 millisecond'
     FROM due WHERE d.id = due.id
     RETURNING d.id, d.webhook_id, d.event_id, d.attempts, d.lease_token, d.is_ping, due.version
   )
   SELECT c.id, c.webhook_id AS "webhookId", c.attempts, c.lease_token AS "leaseToken", c.is_ping AS "isPing", e.payload,
          c.version AS "webhookVersion"
   FROM claimed c CROSS JOIN LATERAL (SELECT payload FROM webhook_events WHERE id = c.event_id LIMIT 1) e
   ORDER BY c.id`;

/**
 * The claim by name (see namedStatement): a claim with nothing due was mostly parsing and planning (bench/README.md,
 * "The claim"). Prepared, it is parsed once per session, and after five custom plans both databases keep to one
 * generic plan, which still visits only the busy webhooks (test/outbox/claim-plan.test.ts checks it).
 */
const CLAIM_DUE = namedStatement('claim_due_v1', CLAIM_DUE_SQL);

export interface RecordedAttempts {
  /** Outcomes that applied (an outcome whose lease had passed to another claim changes nothing). */
  recorded: number;
  /**
   * Webhooks whose attempts in this batch all failed, the last of them at least `autoDisableAfterMs` after the first
   * failed attempt with none sent since: the ones to disable (see disableFailingWebhooks), checked again there. Judged by the recent
   * attempts alone, not by a delivery reaching the end of its retries: with a backlog, claims take the oldest due
   * first, so a timing-out receiver's retries waited behind untried deliveries and it took tens of minutes (hours at
   * larger backlogs) before one ended `failed`.
   */
  failingWebhookIds: number[];
}

/**
 * Writes many attempt outcomes in one statement. Each applies only to the claim it belongs to (`lease_token`):
 * an outcome that arrives after its lease ran out and another process claimed the row again changes nothing.
 *
 * The same statement keeps each webhook's `failing_since` (pings aside: they are an admin's probe, not traffic):
 * set to the batch's first failed attempt when it was not set, cleared when the batch has a sent delivery. Only
 * those changes write a webhook row, so a webhook that keeps succeeding (or keeps failing) costs no write and no
 * round trip beyond the outcomes' own. It also counts the outcomes for the health over time (COUNT_ATTEMPTS_CTE, in
 * attempt-counts.ts: a few rows per statement, whatever the batch). Two such changes racing for two webhooks' rows in opposite orders can
 * deadlock; PostgreSQL then aborts one statement, and the outcome writer writes it again (it keeps its batch).
 */
export async function recordAttempts(db: Queryable, records: readonly AttemptRecord[], autoDisableAfterMs = 0): Promise<RecordedAttempts> {
  if (records.length === 0) return { recorded: 0, failingWebhookIds: [] };
  const { rows } = await db.query<RecordedAttempts>(RECORD_ATTEMPTS, recordParameters(records, autoDisableAfterMs));
  return rows[0]!;
}

/**
 * The parameters of RECORD_ATTEMPTS_SQL: one array per column, in the records' order, as literals built here (see
 * db/array-literals.ts): pg's own escaping of the attempt log entries (JSON, full of quotes) was a third of the
 * batch's cost in the worker; the entries' JSON quoted in one pass (jsonTextArray) took a fifth of what was left
 * (bench/README.md, "Contention").
 */
export function recordParameters(records: readonly AttemptRecord[], autoDisableAfterMs: number): unknown[] {
  return [
    nullableIntegerArray(records.map((r) => r.id)),
    nullableIntegerArray(records.map((r) => r.leaseToken)),
    textArray(records.map((r) => r.status)),
    nullableIntegerArray(records.map((r) => r.nextAttemptAt)),
    nullableIntegerArray(records.map((r) => r.attemptedAt)),
    nullableIntegerArray(records.map((r) => r.responseStatus)),
    textArray(records.map((r) => r.error)),
    jsonTextArray(records.map((r) => r.logEntry)),
    autoDisableAfterMs,
    integerArray(records.map((r) => r.logEntry.durationMs)),
  ];
}

/**
 * recordAttempts' statement (exported so a test can EXPLAIN it). Run by name (see CLAIM_DUE): its generic plan,
 * taken after five runs, still probes every row by primary key, as its custom plans do (the arrays' sub-selects hide
 * their lengths from both; test/outbox/record-plan.test.ts checks both with 10,000 webhooks and 512 outcomes).
 */
export const RECORD_ATTEMPTS_SQL = `WITH recorded AS (
       UPDATE webhook_deliveries d SET
         status = u.status,
         next_attempt_at = CASE WHEN u.status = 'pending' THEN to_timestamp(u.next_attempt_at / 1000.0) END,
         locked_until = NULL,
         last_attempt_at = to_timestamp(u.attempted_at / 1000.0),
         sent_date = CASE WHEN u.status = 'sent' THEN to_timestamp(u.attempted_at / 1000.0) ELSE d.sent_date END,
         finished_at = CASE WHEN u.status = 'pending' THEN NULL ELSE to_timestamp(u.attempted_at / 1000.0) END,
         response_status = u.response_status,
         error = CASE WHEN u.status = 'sent' THEN NULL ELSE u.error END,
         -- Most deliveries succeed at their first attempt, onto an empty log: the entry, wrapped in its array as
         -- text, is the new log, with no jsonb concatenation. Measured on PostgreSQL 15 here: 2.2 µs a row instead of
         -- 4.0 µs for \`log || jsonb_build_array(entry::jsonb)\`.
         attempt_log = CASE WHEN d.attempt_log = '[]'::jsonb THEN ('[' || u.log_entry || ']')::jsonb
                            ELSE d.attempt_log || ('[' || u.log_entry || ']')::jsonb END,
         updated_at = now()
       -- Each array behind a sub-select: the planner cannot see its length and takes it for a few rows, so it probes
       -- each row by primary key at any batch size. Seeing 384 or more, it hashed a full scan of the table instead
       -- (PostgreSQL 15 here, 30,000 rows: 14 ms for 384 outcomes, 26 ms for 512, against 2.6 ms for 256 by key).
       FROM unnest((SELECT $1::bigint[]), (SELECT $2::int[]), (SELECT $3::text[]), (SELECT $4::float8[]), (SELECT $5::float8[]),
                   (SELECT $6::int[]), (SELECT $7::text[]), (SELECT $8::text[]), (SELECT $10::int[]))
         AS u(id, lease_token, status, next_attempt_at, attempted_at, response_status, error, log_entry, duration_ms)
       WHERE d.id = u.id AND d.lease_token = u.lease_token
       RETURNING d.webhook_id, d.status, d.is_ping, u.attempted_at, u.duration_ms
     ), ${COUNT_ATTEMPTS_CTE}, outcomes AS (
       SELECT webhook_id, bool_or(status = 'sent') AS any_sent,
              to_timestamp(min(attempted_at) FILTER (WHERE status <> 'sent') / 1000.0) AS first_failure,
              to_timestamp(max(attempted_at) FILTER (WHERE status <> 'sent') / 1000.0) AS last_failure
       FROM recorded WHERE NOT is_ping GROUP BY webhook_id
     ), health AS (
       UPDATE webhooks w SET failing_since = CASE WHEN o.any_sent THEN NULL ELSE o.first_failure END
       FROM outcomes o
       WHERE w.id = o.webhook_id AND CASE WHEN o.any_sent THEN w.failing_since IS NOT NULL ELSE w.failing_since IS NULL END
     )
     SELECT (SELECT count(*) FROM recorded)::int AS recorded,
            ARRAY(
              -- The webhook rows as they were before this statement: a failing_since set just now is first_failure.
              SELECT o.webhook_id FROM outcomes o JOIN webhooks w ON w.id = o.webhook_id
              WHERE $9::float8 > 0 AND NOT o.any_sent AND w.enabled
                -- The streak's length between attempts, not up to this write: an outcome written late (a busy
                -- process, an outage) must not make one failed attempt a streak.
                AND COALESCE(w.failing_since, o.first_failure) <= o.last_failure - $9::float8 * interval '1 millisecond'
              ORDER BY o.webhook_id
            ) AS "failingWebhookIds"`;

const RECORD_ATTEMPTS = namedStatement('record_attempts_v3', RECORD_ATTEMPTS_SQL);

/** Gives back claims that were never attempted (a stopping worker's queue): due now, the attempt uncounted. */
export async function releaseClaims(db: Queryable, claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[]): Promise<void> {
  if (claims.length === 0) return;
  await db.query(
    `UPDATE webhook_deliveries d SET attempts = d.attempts - 1, locked_until = NULL
     FROM unnest($1::bigint[], $2::int[]) AS u(id, lease_token)
     WHERE d.id = u.id AND d.lease_token = u.lease_token AND d.status = 'pending'`,
    [claims.map((c) => c.id), claims.map((c) => c.leaseToken)],
  );
}

/**
 * Extends the leases of claims still held by this process (waiting for a slot, or in flight) to `leaseMs` from now:
 * a claim whose lease ran out may be claimed and sent again elsewhere. Only the claim each lease belongs to
 * (`lease_token`), and only while pending. Not counted as an attempt.
 */
export async function renewLeases(db: Queryable, claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], leaseMs: number): Promise<number> {
  if (claims.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d SET locked_until = now() + $3 * interval '1 millisecond'
     FROM unnest($1::bigint[], $2::int[]) AS u(id, lease_token)
     WHERE d.id = u.id AND d.lease_token = u.lease_token AND d.status = 'pending'`,
    [claims.map((c) => c.id), claims.map((c) => c.leaseToken), leaseMs],
  );
  return rowCount;
}

/**
 * Lets go of every claim still leased, its deliveries due at once with their attempt counted (it may have gone out:
 * at least once, as when a lease ends). Only where no live process can hold a claim: the embedded database at its
 * start, which one process holds at a time. Answers how many were released.
 */
export async function releaseOrphanedClaims(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`UPDATE webhook_deliveries SET locked_until = NULL WHERE status = 'pending' AND locked_until > now()`);
  return rowCount;
}

/**
 * Makes a delivery pending again and due now, its retry schedule started afresh and its attempt log kept.
 * The new lease token fences off an attempt of it still in flight.
 */
export async function redeliver(db: Queryable, webhookId: number, deliveryId: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, lease_token = lease_token + 1, next_attempt_at = now(),
       locked_until = NULL, finished_at = NULL, updated_at = now()
     WHERE id = $1 AND webhook_id = $2`,
    [deliveryId, webhookId],
  );
  return rowCount > 0;
}

/**
 * ANALYZE the queue when the planner thinks it holds fewer rows than are due right now. After a large fan-out the
 * planner, still thinking the queue small, claims through a bitmap scan and a sort of every due row, and
 * autovacuum fixes that only after its nap (its own change counters lag writes by up to ~10 s, so they cannot
 * tell); a drain on stale statistics ran at 60% of the speed (bench/README.md, "The claim"). The due rows are counted
 * up to 10,000 through the due index, which is slow right after a large drain (so the worker runs it only in large
 * drains).
 */
export async function analyzeQueueIfStale(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ stale: boolean }>(QUEUE_STATISTICS_STALE);
  if (!rows[0]?.stale) return false;
  await db.query('ANALYZE webhook_deliveries');
  return true;
}

/** Run before each round of claims, so by name too: one parse per session. */
const QUEUE_STATISTICS_STALE = namedStatement(
  'queue_statistics_stale_v1',
  `SELECT due >= 1000 AND due > estimated AS stale FROM (
       SELECT (SELECT reltuples FROM pg_class WHERE oid = 'webhook_deliveries'::regclass) AS estimated,
              (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now() LIMIT 10000) d) AS due
     ) s`,
);
