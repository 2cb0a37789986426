import { AdvisoryLockNamespace } from '../db/advisory-locks.js';
import type { Database } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import { MAX_DELIVERIES_PER_CALL } from '../limits.js';
import { countSubscribedWebhooks, enqueueEvents, webhooksEnabled, type DomainEvent } from '../outbox/enqueue.js';
import { renderNewCase, renderNewMatch } from '../outbox/events.js';
import { findAlert } from './alerts.js';
import { caseUrl } from './case-url.js';
import { hashTarget, targetOf, type Match, type Target } from './target.js';

export const MAX_MATCHES_PER_CALL = 1000;
export const MAX_TARGET_IDS = 10_000;
export const MAX_ID_LENGTH = 256;

export interface MatchResult {
  id: number;
  created: boolean;
}

interface UpsertedCase {
  id: number;
  hash: string;
  inserted: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Checks every rule before anything is written: a call that breaks one changes nothing. */
export function checkMatches(matches: readonly Match[]): Target[] {
  if (matches.length > MAX_MATCHES_PER_CALL) {
    throw invalidParameter(`matches must have at most ${MAX_MATCHES_PER_CALL} items, got ${matches.length}`);
  }
  return matches.map((match, i) => {
    for (const kind of ['nodes', 'edges'] as const) {
      match[kind]?.forEach((id, j) => {
        if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
          throw invalidParameter(`matches[${i}].${kind}[${j}] must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
        }
      });
    }
    const target = targetOf(match);
    const size = target.nodes.length + target.edges.length;
    if (size === 0) throw invalidParameter(`matches[${i}] must have at least one node or edge ID`);
    if (size > MAX_TARGET_IDS) throw invalidParameter(`matches[${i}] has ${size} node and edge IDs; a target has at most ${MAX_TARGET_IDS}`);
    return target;
  });
}

/**
 * Refuses, before any work, a call that could create more than `maxDeliveries` deliveries. Each match is one event
 * (newCase or newMatch) and each event gives one delivery per subscribed webhook, so matches × webhooks subscribed to
 * either on this data source bounds it. 2,000 webhooks × 1,000 matches made 2,000,000 rows in one 25 s transaction.
 */
async function checkDeliveryBound(db: Database, sourceKey: string, matchCount: number, maxDeliveries: number): Promise<void> {
  const webhooks = await countSubscribedWebhooks(db, ['newCase', 'newMatch'], sourceKey);
  const most = matchCount * webhooks;
  // Only on the rare refusal path: with the feature off, nothing would be created.
  if (most <= maxDeliveries || !(await webhooksEnabled(db))) return;
  throw invalidParameter(
    `matches: this call could create up to ${most} deliveries (${matchCount} matches × ${webhooks} webhooks subscribed to newCase or newMatch ` +
      `on data source "${sourceKey}"), over the limit of ${maxDeliveries} deliveries per call: send at most ${Math.floor(maxDeliveries / webhooks)} matches per call`,
  );
}

/**
 * Records what an alert's query found, in one transaction: each match whose target no case of the alert has
 * creates a case (newCase); each other one bumps its case (newMatch). The events' deliveries are written in
 * the same transaction. Answers one entry per match, in order.
 */
export async function reportMatches(
  db: Database,
  publicBaseUrl: string,
  sourceKey: string,
  alertId: number,
  matches: readonly Match[],
  maxDeliveries: number = MAX_DELIVERIES_PER_CALL,
): Promise<MatchResult[]> {
  const targets = checkMatches(matches);
  if (targets.length === 0) {
    await findAlert(db, sourceKey, alertId);
    return [];
  }
  await checkDeliveryBound(db, sourceKey, targets.length, maxDeliveries);
  const hashes = targets.map(hashTarget);

  // One row per distinct target, with how many times this call matched it.
  const distinct = new Map<string, { target: Target; count: number }>();
  targets.forEach((target, i) => {
    const entry = distinct.get(hashes[i]!);
    if (entry) entry.count++;
    else distinct.set(hashes[i]!, { target, count: 1 });
  });
  // In the order of first occurrence, so new cases get ids in the order they were reported.
  const rows = [...distinct.entries()];

  return db.transaction(async (tx) => {
    // One report of an alert at a time. Two concurrent calls sharing targets in different orders would otherwise
    // lock the same case rows in different orders and deadlock; six such calls at once exhausted db.transaction's
    // retries in CI. An alert has one runner, so serialising its reports costs nothing in practice.
    await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [AdvisoryLockNamespace.alertMatches, alertId]);
    // FOR SHARE: the alert cannot be deleted under us; its title and description are frozen into the payloads.
    const alert = await findAlert(tx, sourceKey, alertId, true);
    const { rows: upserted } = await tx.query<UpsertedCase>(
      `INSERT INTO cases AS c (alert_id, hash, nodes, edges, match_count)
       SELECT $1, r.hash, ARRAY(SELECT jsonb_array_elements_text(r.nodes)), ARRAY(SELECT jsonb_array_elements_text(r.edges)), r.n
       FROM jsonb_to_recordset($2::jsonb) AS r(hash text, nodes jsonb, edges jsonb, n int)
       ON CONFLICT (alert_id, hash) DO UPDATE SET match_count = c.match_count + EXCLUDED.match_count, updated_at = now()
       RETURNING c.id, c.hash, (c.xmax = 0) AS inserted, c.created_at, c.updated_at`,
      [alertId, JSON.stringify(rows.map(([hash, { target, count }]) => ({ hash, nodes: target.nodes, edges: target.edges, n: count })))],
    );
    const byHash = new Map(upserted.map((row) => [row.hash, row]));

    const seen = new Set<string>();
    const results: MatchResult[] = [];
    const events: DomainEvent[] = [];
    targets.forEach((target, i) => {
      const hash = hashes[i]!;
      const row = byHash.get(hash)!;
      // The first match of a target that had no case created it; any other match of it is a new match.
      const created = row.inserted && !seen.has(hash);
      seen.add(hash);
      results.push({ id: row.id, created });
      const snapshot = { id: row.id, createdAt: row.created_at, nodes: target.nodes, edges: target.edges, url: caseUrl(publicBaseUrl, alertId, row.id) };
      events.push({
        eventType: created ? 'newCase' : 'newMatch',
        sourceKey,
        payload: created ? renderNewCase(sourceKey, alert, snapshot) : renderNewMatch(sourceKey, alert, { ...snapshot, updatedAt: row.updated_at }),
      });
    });
    await enqueueEvents(tx, events);
    return results;
  });
}
