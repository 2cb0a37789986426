/**
 * The third phase of an alert run: one classified batch written in the run's transaction. Its candidates are looked
 * up (recordedBefore, under the alert's matches lock), only the rows of those never recorded are moved from the
 * engine (none in an unchanged rerun), and they are recorded with their events' deliveries (record-matches.ts). It
 * answers what it did, as counts the run sums: it changes nothing of the run's.
 */
import type { Transaction } from '../db/database.js';
import { GraphError, type IdentifiedBatch } from '../graph/graph-source.js';
import type { GraphRow } from '../graph/items.js';
import { hashTarget, identityOfKey } from '../graph/match-identity.js';
import type { AlertColumn } from './alerts.js';
import { matchOfRow } from './alert-rows.js';
import type { ClassifiedBatch } from './run-classify.js';
import { recordedBefore, recordMatches, type FoundMatch, type RecordContext } from './record-matches.js';

/** What a run's writes did: summed over its batches. */
export interface WriteCounts {
  /** Distinct matches the run found that the alert had not recorded: each recorded once, however many rows found it. */
  matchesNew: number;
  /** Distinct matches the run found that the alert had recorded before this run. */
  matchesSeen: number;
  /** Of matchesSeen, those this process knew recorded (RecordedMatches): not looked up in the database. */
  matchesKnown: number;
  /** Rows moved whole from the graph (the others by their identity alone): the matches new to the alert. */
  rowsMoved: number;
  casesOpened: number;
  events: number;
}

export const NO_WRITES: WriteCounts = { matchesNew: 0, matchesSeen: 0, matchesKnown: 0, rowsMoved: 0, casesOpened: 0, events: 0 };

export function addCounts(a: WriteCounts, b: WriteCounts): WriteCounts {
  return {
    matchesNew: a.matchesNew + b.matchesNew,
    matchesSeen: a.matchesSeen + b.matchesSeen,
    matchesKnown: a.matchesKnown + b.matchesKnown,
    rowsMoved: a.rowsMoved + b.rowsMoved,
    casesOpened: a.casesOpened + b.casesOpened,
    events: a.events + b.events,
  };
}

/** What every batch of a run writes for: the alert, as its matches are made, and its events' context. */
export interface WriteTarget {
  alert: { id: number; target: string | null; columns: readonly AlertColumn[] };
  context: RecordContext;
}

export type BatchWritten =
  | {
      kind: 'written';
      counts: WriteCounts;
      /** The batch's candidates (names): every one is recorded now, found before or just now. */
      recorded: readonly string[];
      /** The run's deliveries bound was met: some of the batch's new matches were not recorded. */
      deliveriesCapped: boolean;
    }
  /** The graph went away (a hard stop) before the rows came: the batch is not recorded, the run partial. */
  | { kind: 'graphFailed'; err: GraphError };

/**
 * Writes a batch the run classified. `newMatchesLeft`: how many more new matches the run may record (its deliveries
 * bound); past them it records none (the next run records them).
 */
export async function writeBatch(tx: Transaction, target: WriteTarget, batch: IdentifiedBatch, classified: ClassifiedBatch, newMatchesLeft: number): Promise<BatchWritten> {
  const { candidates, candidateNames } = classified;
  // A long key is known by its hash (knownAs): that name is its identity already.
  const identities = candidates.map((i, k) => (candidateNames[k] === batch.keys[i] ? identityOfKey(batch.keys[i]!) : candidateNames[k]!));
  const seen = new Set(await recordedBefore(tx, target.alert.id, identities));
  const unseen: number[] = [];
  for (let k = 0; k < candidates.length; k++) if (!seen.has(k)) unseen.push(k);
  let rows: GraphRow[];
  try {
    rows = await batch.rows(unseen.map((k) => candidates[k]!));
  } catch (err) {
    if (err instanceof GraphError) return { kind: 'graphFailed', err };
    throw err;
  }
  const found = rows.map((row, j) => foundMatch(row, target, identities[unseen[j]!]!, classified.firstRow + candidates[unseen[j]!]!));
  const deliveriesCapped = found.length > newMatchesLeft;
  const kept = deliveriesCapped ? found.slice(0, Math.max(0, newMatchesLeft)) : found;
  const written = kept.length > 0 ? await recordMatches(tx, target.context, kept, 'run') : { matchesNew: 0, casesOpened: 0, events: 0 };
  const counts = { matchesNew: written.matchesNew, matchesSeen: classified.known + seen.size, matchesKnown: classified.known, rowsMoved: found.length, casesOpened: written.casesOpened, events: written.events };
  return { kind: 'written', counts, recorded: candidateNames, deliveriesCapped };
}

/** The match a moved row is, checked against the identity the engine gave it (`identity`); `rowNumber` names it. */
function foundMatch(row: GraphRow, target: WriteTarget, identity: string, rowNumber: number): FoundMatch {
  const match = matchOfRow(row, target.alert.target, target.alert.columns);
  const hash = match && hashTarget(match.identity);
  // The engine's identity and this process's are made by one function (match-identity.ts); a row whose two differ
  // would be recorded again by every run, so it fails the run instead.
  if (!match || hash !== identity) throw new Error(`row ${rowNumber}: its match identity differs between the graph process and the service`);
  return { ...match, hash };
}
