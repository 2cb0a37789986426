/**
 * The second phase of an alert run, pure: a batch's match keys sorted into what the run does with them, before any
 * of it is looked up or written. A row is no match (it names no node or edge), too large to be one, a match the run
 * met already (2 matches found by 7 rows are 2 matches), a match this process knows the alert recorded (known: not
 * looked up), or a candidate: the first row of a match that may be new, whose identity the database is asked about.
 * Only the candidates are hashed and looked up: none in an unchanged rerun.
 */
import { MAX_TARGET_IDS, NO_MATCH, TOO_LARGE } from '../graph/match-identity.js';
import type { RunProblem } from './alerts.js';
import { knownAs } from './recorded-matches.js';

/** What the run had read when a batch came. */
export interface ReadBefore {
  /** Rows the run read before this batch, over all its queries (each counts towards maxMatches). */
  rowsRead: number;
  /** The most rows a run reads (effectiveLimits). */
  maxMatches: number;
  /** The matches the run met before this batch, by name (knownAs), over all its queries. */
  met: ReadonlySet<string>;
  /** The matches this process knows the alert recorded (RecordedMatches), by name. */
  known: ReadonlySet<string>;
}

/** Rows too large to be a match: how many, and the run's number (from 1) of the first (0 when none). */
export interface Oversized {
  rows: number;
  first: number;
}

export const NO_OVERSIZED: Oversized = { rows: 0, first: 0 };

export interface ClassifiedBatch {
  /** The rows of the batch the run reads: all of them, or those up to maxMatches. */
  rows: number;
  /** maxMatches is reached: the run reads no further. */
  capped: boolean;
  /** The run's number (from 1) of the batch's first row. */
  firstRow: number;
  /** The matches first met in this batch, by name: every one below, known or candidate. */
  met: string[];
  /** Of them, how many this process knows recorded. */
  known: number;
  /** The others' first rows (positions in the batch, ascending), maybe new matches... */
  candidates: number[];
  /** ...and their names, in the same order. */
  candidateNames: string[];
  oversized: Oversized;
}

/** Sorts the rows of a batch, `keys` (the engine's match keys, NO_MATCH and TOO_LARGE included), by what they are. */
export function classifyBatch(keys: readonly string[], before: ReadBefore): ClassifiedBatch {
  // Past maxMatches the run stops reading: the rows up to it are recorded, the rest not read.
  const capped = before.rowsRead + keys.length > before.maxMatches;
  const rows = capped ? Math.max(0, before.maxMatches - before.rowsRead) : keys.length;
  const firstRow = before.rowsRead + 1;
  const classified: ClassifiedBatch = { rows, capped, firstRow, met: [], known: 0, candidates: [], candidateNames: [], oversized: NO_OVERSIZED };
  // The matches met in this batch, beside those met before it (left as they are: the caller adds these).
  const metHere = new Set<string>();
  let oversized = 0;
  let firstOversized = 0;
  for (let i = 0; i < rows; i++) {
    const key = keys[i]!;
    if (key === NO_MATCH) continue;
    if (key === TOO_LARGE) {
      firstOversized ||= firstRow + i;
      oversized++;
      continue;
    }
    const name = knownAs(key);
    if (before.met.has(name) || metHere.has(name)) continue;
    metHere.add(name);
    classified.met.push(name);
    if (before.known.has(name)) classified.known++;
    else {
      classified.candidates.push(i);
      classified.candidateNames.push(name);
    }
  }
  return oversized === 0 ? classified : { ...classified, oversized: { rows: oversized, first: firstOversized } };
}

/** The oversized rows of two batches of one query, together. */
export function addOversized(a: Oversized, b: Oversized): Oversized {
  return b.rows === 0 ? a : { rows: a.rows + b.rows, first: a.first || b.first };
}

/** A query's rows too large to be recorded, as the run's problem: none when there were none. */
export function oversizedProblems(queryId: number, oversized: Oversized): RunProblem[] {
  if (oversized.rows === 0) return [];
  const rows = oversized.rows === 1 ? 'row was' : 'rows were';
  const message = `${oversized.rows} ${rows} not recorded (the first: row ${oversized.first}): each holds more than ${MAX_TARGET_IDS} nodes and edges, the most a match may hold`;
  return [{ source: 'alertQuery', queryId, error: { key: 'match_too_large', message }, partial: true }];
}
