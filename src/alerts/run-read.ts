/**
 * An alert run's started queries read batch by batch, each batch classified (run-classify.ts) and written
 * (run-write.ts) in the run's transaction, what each write did summed into the run's tally.
 *
 * A batch is written while the next is read: the database's work and the graph's overlap. At most one write is under
 * way (the transaction's statements run one at a time, and a batch's look-up must see the matches the batch before it
 * inserted), so the Kùzu process holds at most four batches (the stream asks for two ahead). A write under way is held
 * as a promise that never rejects (its outcome or its error, as a value): its failure is thrown where the run takes
 * its outcome, and no statement of the transaction is left running past a query's end, whatever ended it.
 */
import type { Transaction } from '../db/database.js';
import { GraphError, type IdentifiedBatch } from '../graph/graph-source.js';
import type { RunProblem } from './alerts.js';
import { addOversized, classifyBatch, NO_OVERSIZED, oversizedProblems, type ClassifiedBatch, type Oversized } from './run-classify.js';
import { problemOf, type StartedQuery } from './run-queries.js';
import { addCounts, NO_WRITES, writeBatch, type BatchWritten, type WriteCounts, type WriteTarget } from './run-write.js';

// Matches written per statement group: bounds the memory a run holds, whatever its size.
const BATCH = 1000;

/** What a run writes with, fixed for its transaction. */
export interface RunWriter extends WriteTarget {
  tx: Transaction;
  /** The most rows the run reads (effectiveLimits). */
  maxMatches: number;
  /** The most new matches the run records: its deliveries bound over the webhooks they go to (run-bounds.ts). */
  newMatchesAllowed: number;
  /** The matches this process knows the alert recorded, by name (RecordedMatches). */
  known: ReadonlySet<string>;
  /** How many names this run may learn (what RecordedMatches holds, less what it knows): undefined, none learnt. */
  learnRoom: number | undefined;
}

/**
 * What the run will learn the alert recorded, once it commits: the names of each batch, or `forget` when it cannot
 * know them all (no RecordedMatches, more than it may hold, or matches left unrecorded by the deliveries bound). An
 * alert with more matches than all that is known may hold would push every other alert out and still be known only
 * in part; what such a run read is let go as it goes.
 */
export type Learnt = { readonly batches: readonly (readonly string[])[]; readonly names: number; readonly room: number } | 'forget';

/** What the run read and wrote, over its queries so far. */
export interface RunTally {
  /** Rows the queries answered and the run read (each counts towards maxMatches, a match or not, met before or not). */
  rowsRead: number;
  written: WriteCounts;
  learnt: Learnt;
  /** maxMatches was reached: the run read no further. */
  capped: boolean;
  /** The deliveries bound was reached: the run recorded no further. */
  deliveriesCapped: boolean;
  /** The queries' problems met while reading: a graph's failure, rows too large. */
  problems: RunProblem[];
}

/** Reads the started queries in turn, until their end or a bound; answers the run's tally. */
export async function readQueries(writer: RunWriter, streams: readonly StartedQuery[]): Promise<RunTally> {
  const learnt: Learnt = writer.learnRoom === undefined ? 'forget' : { batches: [], names: 0, room: writer.learnRoom };
  let tally: RunTally = { rowsRead: 0, written: NO_WRITES, learnt, capped: false, deliveriesCapped: false, problems: [] };
  // The matches this run met, by name (knownAs), over all its queries and batches; at most maxMatches of them.
  const met = new Set<string>();
  for (const query of streams) {
    tally = await readQuery(writer, query, met, tally);
    if (tally.capped || tally.deliveriesCapped) break;
  }
  return tally;
}

/** A write under way, as a value: what it did with its batch, or why it failed. */
type SettledWrite = { classified: ClassifiedBatch; written: BatchWritten } | { error: unknown };

/** Where a query's reading is: the run's tally, and this query's own findings. */
interface QueryRead {
  tally: RunTally;
  /** The first failure of the graph met reading the query: one problem per query, however many batches it cut. */
  graphFailure: GraphError | undefined;
  oversized: Oversized;
}

/** Reads one query's batches (pipelined: a batch is written while the next is read); closes its stream. */
async function readQuery(writer: RunWriter, { queryId, stream }: StartedQuery, met: Set<string>, tally: RunTally): Promise<RunTally> {
  let read: QueryRead = { tally, graphFailure: undefined, oversized: NO_OVERSIZED };
  let writing: Promise<SettledWrite> | undefined;
  let last: SettledWrite | undefined;
  try {
    for await (const batch of stream.identified(BATCH)) {
      const classified = classifyBatch(batch.keys, { rowsRead: read.tally.rowsRead, maxMatches: writer.maxMatches, met, known: writer.known });
      for (const name of classified.met) met.add(name);
      read = { ...read, tally: { ...read.tally, rowsRead: read.tally.rowsRead + classified.rows, capped: classified.capped }, oversized: addOversized(read.oversized, classified.oversized) };
      // The batch before has been written before this one is: its look-up must see what that one inserted.
      const before = writing;
      writing = undefined;
      if (before) read = settle(read, await before, met);
      // Past the deliveries' bound nothing more is recorded.
      if (read.tally.deliveriesCapped) break;
      writing = startWrite(writer, batch, classified, read.tally.written.matchesNew);
      if (classified.capped) break;
    }
  } catch (err) {
    // What was read before a time-out (or the graph going away) is kept: the run is partial.
    if (!(err instanceof GraphError)) throw err;
    read = { ...read, graphFailure: read.graphFailure ?? err };
  } finally {
    // The last batch's rows are picked before the stream is closed (closing drops them in the engine).
    last = await writing;
    await stream.close();
  }
  if (last) read = settle(read, last, met);
  const failed = read.graphFailure ? [problemOf(read.graphFailure, queryId, true)] : [];
  return { ...read.tally, problems: [...read.tally.problems, ...failed, ...oversizedProblems(queryId, read.oversized)] };
}

function startWrite(writer: RunWriter, batch: IdentifiedBatch, classified: ClassifiedBatch, matchesNew: number): Promise<SettledWrite> {
  return writeBatch(writer.tx, writer, batch, classified, writer.newMatchesAllowed - matchesNew).then(
    (written) => ({ classified, written }),
    (error: unknown) => ({ error }),
  );
}

/**
 * A query's reading once a batch's write has ended: its counts summed and its names learnt, or, when the graph went
 * away before its rows came, the batch taken back (its rows not read, its matches not met: a later row of one is its
 * first). A write that failed otherwise fails the run.
 */
function settle(read: QueryRead, settled: SettledWrite, met: Set<string>): QueryRead {
  if ('error' in settled) throw settled.error;
  const { classified, written } = settled;
  const { tally } = read;
  if (written.kind === 'graphFailed') {
    for (const name of classified.met) met.delete(name);
    return { ...read, tally: { ...tally, rowsRead: tally.rowsRead - classified.rows }, graphFailure: read.graphFailure ?? written.err };
  }
  // Matches left unrecorded would be learnt as recorded: the run asks the database about them next time.
  const learnt = written.deliveriesCapped ? 'forget' : learn(tally.learnt, written.recorded);
  return { ...read, tally: { ...tally, written: addCounts(tally.written, written.counts), learnt, deliveriesCapped: written.deliveriesCapped } };
}

function learn(learnt: Learnt, names: readonly string[]): Learnt {
  if (learnt === 'forget' || learnt.names + names.length > learnt.room) return 'forget';
  return { ...learnt, batches: [...learnt.batches, names], names: learnt.names + names.length };
}
