import { AdvisoryLockNamespace } from '../db/advisory-locks.js';
import type { Database } from '../db/database.js';
import { invalidParameter } from '../errors.js';
import { MAX_DELIVERIES_PER_CALL } from '../limits.js';
import { countSubscribedWebhooks, webhooksEnabled } from '../outbox/enqueue.js';
import { findAlert } from './alerts.js';
import { recordMatches } from './record-matches.js';
import { MAX_TARGET_IDS, targetOf, type Match, type Target } from '../graph/match-identity.js';

export const MAX_MATCHES_PER_CALL = 1000;
export const MAX_ID_LENGTH = 256;

export interface MatchResult {
  id: number;
  created: boolean;
}

/** Checks every rule before anything is written: a call that breaks one changes nothing. */
export function checkMatches(matches: readonly Match[]): Target[] {
  if (matches.length > MAX_MATCHES_PER_CALL) {
    throw invalidParameter(`matches must have at most ${MAX_MATCHES_PER_CALL} items, got ${matches.length}`, 'matches');
  }
  return matches.map((match, i) => {
    for (const kind of ['nodes', 'edges'] as const) {
      match[kind]?.forEach((id, j) => {
        if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
          throw invalidParameter(`matches[${i}].${kind}[${j}] must be a non-empty string of at most ${MAX_ID_LENGTH} characters`, `matches[${i}].${kind}[${j}]`);
        }
      });
    }
    const target = targetOf(match);
    const size = target.nodes.length + target.edges.length;
    if (size === 0) throw invalidParameter(`matches[${i}] must have at least one node or edge ID`, `matches[${i}]`);
    if (size > MAX_TARGET_IDS) throw invalidParameter(`matches[${i}] has ${size} node and edge IDs; a target has at most ${MAX_TARGET_IDS}`, `matches[${i}]`);
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
    'matches',
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
  return db.transaction(async (tx) => {
    // One report of an alert at a time. Two concurrent calls sharing targets in different orders would otherwise
    // lock the same case rows in different orders and deadlock; six such calls at once exhausted db.transaction's
    // retries in CI. An alert's runs take the same lock (alert-run.ts).
    await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [AdvisoryLockNamespace.alertMatches, alertId]);
    // FOR SHARE: the alert cannot be deleted under us; its title and description are frozen into the payloads.
    const alert = await findAlert(tx, sourceKey, alertId, true);
    const found = targets.map((target) => ({ identity: target, caseKey: target }));
    const { matches: recorded } = await recordMatches(tx, { publicBaseUrl, sourceKey, alert }, found, 'report');
    return recorded.map(({ caseId, created }) => ({ id: caseId, created }));
  });
}
