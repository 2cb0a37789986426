/**
 * The matches this process knows each alert recorded, by match key, so that an unchanged rerun skips the database:
 * asking it about 60,000 rows cost its server about 200 ms of CPU a rerun, on the two cores the graph's engine also
 * runs on (bench/README.md, "Alerts"). A key known here is one a committed run of this process recorded or found
 * recorded; a key not known is asked as before. So what it knows may be less than the truth, never more, as long as
 * no match is deleted: each alert's `matches_epoch` (migration 0014) is bumped by every statement deleting its matches,
 * and what was learnt at another epoch is forgotten.
 *
 * Bounded: at most `maxKeys` keys for all alerts (the least recently run alerts are forgotten first; an alert run
 * that finds more matches than that is not learnt at all: alert-run.ts), and a long key is kept as its hash.
 */
import { identityOfKey } from '../graph/match-identity.js';

/** Keys of 100,000 matches of two nodes and an edge: about 13 MB. */
export const DEFAULT_MAX_KEYS = 100_000;
// A key longer than this is kept as its hash (64 characters): a match of many nodes does not cost more. No key is
// mistaken for a hash: a key starts with `[`, a hash never does.
const LONGEST_KEPT = 128;

/** What a match key is known by: itself, or its hash (match identity) when it is long. */
export function knownAs(key: string): string {
  return key.length <= LONGEST_KEPT ? key : identityOfKey(key);
}

export class RecordedMatches {
  readonly #maxKeys: number;
  // In order of last use: the first is forgotten first.
  readonly #alerts = new Map<number, { epoch: string; keys: Set<string> }>();
  #size = 0;

  constructor(maxKeys = DEFAULT_MAX_KEYS) {
    this.#maxKeys = maxKeys;
  }

  /** The most keys known, for all alerts. */
  get maxKeys(): number {
    return this.#maxKeys;
  }

  /** How many keys are known, for all alerts. */
  get size(): number {
    return this.#size;
  }

  /** The keys (knownAs) known recorded for the alert at its `epoch`: empty when none are, or were at another epoch. */
  known(alertId: number, epoch: string): ReadonlySet<string> {
    const entry = this.#alerts.get(alertId);
    if (!entry) return EMPTY;
    if (entry.epoch !== epoch) {
      this.forget(alertId);
      return EMPTY;
    }
    // Used last: forgotten last.
    this.#alerts.delete(alertId);
    this.#alerts.set(alertId, entry);
    return entry.keys;
  }

  /**
   * Learns keys (knownAs) of matches the alert has recorded: call it after the transaction that recorded or looked
   * them up committed, with the epoch read in it. Other alerts are forgotten to make room; past the bound, the rest
   * of `keys` is not kept.
   */
  learn(alertId: number, epoch: string, keys: Iterable<string>): void {
    let entry = this.#alerts.get(alertId);
    if (entry && entry.epoch !== epoch) {
      this.forget(alertId);
      entry = undefined;
    }
    entry ??= { epoch, keys: new Set() };
    this.#alerts.delete(alertId);
    this.#alerts.set(alertId, entry);
    for (const key of keys) {
      if (entry.keys.has(key)) continue;
      if (this.#size >= this.#maxKeys && !this.#evictOtherThan(alertId)) break;
      entry.keys.add(key);
      this.#size++;
    }
  }

  forget(alertId: number): void {
    const entry = this.#alerts.get(alertId);
    if (!entry) return;
    this.#size -= entry.keys.size;
    this.#alerts.delete(alertId);
  }

  /** Forgets the least recently used alert other than `alertId`: false when there is none. */
  #evictOtherThan(alertId: number): boolean {
    for (const id of this.#alerts.keys()) {
      if (id === alertId) continue;
      this.forget(id);
      return true;
    }
    return false;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
