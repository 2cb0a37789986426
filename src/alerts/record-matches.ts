/**
 * The one way matches become cases and events, whoever found them: the alert runner (run-write.ts), which reports
 * nothing for a match an earlier run recorded, and the match report of the API (matches.ts), where every reported
 * match is an event (docs/api.md, "Matches"). Runs inside the caller's transaction, after its per-alert lock.
 */
import { namedStatement, type Transaction } from '../db/database.js';
import type { PropertyValue } from '../graph/graph-schemas.js';
import { enqueueEvents, type DomainEvent, type EventRouting } from '../outbox/enqueue.js';
import { renderNewCase, renderNewMatch, type AlertSummary } from '../outbox/events.js';
import { caseUrl } from './case-url.js';
import { integerArray, textArray } from '../db/array-literals.js';
import { hashTarget, type Target } from '../graph/match-identity.js';

export interface FoundMatch {
  /** The match's own nodes and edges: its identity. */
  identity: Target;
  /** hashTarget(identity), when the caller made it already. */
  hash?: string;
  /** The nodes and edges that name its case (the alert's `target` variable, or the whole match). */
  caseKey: Target;
  columns?: Record<string, PropertyValue>;
}

export interface RecordContext {
  publicBaseUrl: string;
  sourceKey: string;
  alert: AlertSummary;
  /** Read once for a run's many batches (readEventRouting); read per call when absent. */
  routing?: EventRouting;
}

export interface RecordedMatch {
  caseId: number;
  created: boolean;
}

export interface RecordedBatch {
  matches: RecordedMatch[];
  matchesNew: number;
  casesOpened: number;
  events: number;
}

interface UpsertedCase {
  id: number;
  hash: string;
  inserted: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * Which of `identities` (match identity hashes) the alert recorded before: their positions. One index probe per
 * hash, whatever the planner believes: `hash = ANY($2)` was planned, on the statistics of a table that had just
 * grown by a run's matches, as a scan of all the alert's matches per batch (quadratic in the matches; bench/README.md,
 * "Alerts"). The hashes go as one comma-separated text (hex needs no
 * quoting, so no array to escape) and come back as the positions (from 0) of those seen, in one array.
 */
export async function recordedBefore(tx: Transaction, alertId: number, identities: readonly string[]): Promise<number[]> {
  if (identities.length === 0) return [];
  const { rows } = await tx.query<{ seen: number[] }>(RECORDED_BEFORE, [alertId, identities.join(',')]);
  return rows[0]!.seen;
}

// Asked once per batch of a run (60 times in a rerun of 60,000 matches): planned once per connection. Its plan does
// not hang on the values (one probe of the (alert_id, hash) key per hash), so the generic plan is the custom one.
const RECORDED_BEFORE = namedStatement(
  'recorded_before_v1',
  `SELECT coalesce(array_agg((h.i - 1)::int), '{}') AS seen FROM unnest(string_to_array($2, ',')) WITH ORDINALITY AS h(hash, i)
   CROSS JOIN LATERAL (SELECT FROM alert_matches m WHERE m.alert_id = $1 AND m.hash = h.hash LIMIT 1) AS found`,
);

/**
 * The cases of `found` (their case keys' hashes, `caseHashes`), opened or given their new matches' count, by hash:
 * one row per case key, with how many matches it gets, in order of first occurrence.
 */
async function upsertCases(tx: Transaction, alertId: number, found: readonly FoundMatch[], caseHashes: readonly string[]): Promise<Map<string, UpsertedCase>> {
  const cases = new Map<string, { key: Target; count: number }>();
  found.forEach((m, i) => {
    const entry = cases.get(caseHashes[i]!);
    if (entry) entry.count++;
    else cases.set(caseHashes[i]!, { key: m.caseKey, count: 1 });
  });
  const byHash = new Map<string, UpsertedCase>();
  if (cases.size === 0) return byHash;
  const keys = [...cases];
  const { rows } = await tx.query<UpsertedCase>(
    `INSERT INTO cases AS c (alert_id, hash, nodes, edges, match_count)
     SELECT $1, r.hash, r.nodes::text[], r.edges::text[], r.n FROM unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS r(hash, nodes, edges, n)
     ON CONFLICT (alert_id, hash) DO UPDATE SET match_count = c.match_count + EXCLUDED.match_count, updated_at = now()
     RETURNING c.id, c.hash, (c.xmax = 0) AS inserted, c.created_at, c.updated_at`,
    [
      alertId,
      textArray(keys.map(([hash]) => hash)),
      textArray(keys.map(([, { key }]) => textArray(key.nodes))),
      textArray(keys.map(([, { key }]) => textArray(key.edges))),
      integerArray(keys.map(([, { count }]) => count)),
    ],
  );
  for (const row of rows) byHash.set(row.hash, row);
  return byHash;
}

/**
 * Records `found` for the alert. `mode: 'run'`: each is a match the alert never recorded, each identity once (the
 * runner looked them up with recordedBefore, under the alert's lock, and kept the first of repeats); `mode:
 * 'report'`: each is taken as a new match (one seen before is recorded once, in its first case). Each recorded match
 * opens its case (newCase) or adds to it (newMatch).
 */
export async function recordMatches(tx: Transaction, context: RecordContext, found: readonly FoundMatch[], mode: 'run' | 'report'): Promise<RecordedBatch> {
  const { alert, sourceKey, publicBaseUrl } = context;
  const identities = found.map((m) => m.hash ?? hashTarget(m.identity));
  const caseHashes = found.map((m) => hashTarget(m.caseKey));
  const byHash = await upsertCases(tx, alert.id, found, caseHashes);

  const opened = new Set<string>();
  const kept: { hash: string; caseId: number; nodes: string[]; edges: string[]; columns: Record<string, PropertyValue> }[] = [];
  // What each recorded match is, by its index in `found`, for its event below.
  const created: boolean[] = [];
  const matches = found.map((m, i): RecordedMatch => {
    const caseHash = caseHashes[i]!;
    const row = byHash.get(caseHash)!;
    // The first match of a case key that had no case opened it; any other match of it is a new match.
    created[i] = row.inserted && !opened.has(caseHash);
    if (row.inserted) opened.add(caseHash);
    kept.push({ hash: identities[i]!, caseId: row.id, nodes: m.identity.nodes, edges: m.identity.edges, columns: m.columns ?? {} });
    return { caseId: row.id, created: created[i]! };
  });
  // Sent before the events are rendered, awaited after: the server inserts the matches while this process renders
  // the payloads (the transaction's statements still run one at a time, in the order they are sent).
  const inserting =
    kept.length === 0
      ? Promise.resolve()
      : tx.query(
          // A reported match seen before is recorded once (its first case). A run inserts none seen before: it looked
          // them up (recordedBefore), under the alert's lock, so it skips the conflict check (a tenth of the insert's cost).
          `INSERT INTO alert_matches (alert_id, hash, case_id, nodes, edges, columns)
           SELECT $1, r.hash, r.case_id, r.nodes::text[], r.edges::text[], r.columns::jsonb
           FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[]) AS r(hash, case_id, nodes, edges, columns)
           ${mode === 'report' ? 'ON CONFLICT (alert_id, hash) DO NOTHING' : ''}`,
          [
            alert.id,
            textArray(kept.map((k) => k.hash)),
            integerArray(kept.map((k) => k.caseId)),
            textArray(kept.map((k) => textArray(k.nodes))),
            textArray(kept.map((k) => textArray(k.edges))),
            textArray(kept.map((k) => JSON.stringify(k.columns))),
          ],
        );
  // Its failure is thrown below, once the events' statements have settled too, not as an unhandled rejection.
  inserting.catch(() => undefined);
  const events: DomainEvent[] = [];
  found.forEach((m, i) => {
    const row = byHash.get(caseHashes[i]!)!;
    const snapshot = { id: row.id, createdAt: row.created_at, nodes: m.caseKey.nodes, edges: m.caseKey.edges, url: caseUrl(publicBaseUrl, alert.id, row.id) };
    events.push({
      eventType: created[i] ? 'newCase' : 'newMatch',
      sourceKey,
      alertId: alert.id,
      caseId: row.id,
      payload: created[i] ? renderNewCase(sourceKey, alert, snapshot) : renderNewMatch(sourceKey, alert, { ...snapshot, updatedAt: row.updated_at }),
    });
  });
  // Both settled before this returns, and the first statement's failure is the one thrown (the later ones fail only
  // because the transaction is aborted).
  const [inserted, enqueued] = await Promise.allSettled([inserting, enqueueEvents(tx, events, context.routing)]);
  if (inserted.status === 'rejected') throw inserted.reason;
  if (enqueued.status === 'rejected') throw enqueued.reason;
  const matchesNew = kept.length;
  return { matches, matchesNew, casesOpened: opened.size, events: events.length };
}
