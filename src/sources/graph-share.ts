import { availableParallelism } from 'node:os';

/**
 * How the users of one graph share its engine, so that one user cannot starve the others.
 *
 * Kùzu runs a query's tasks on its worker threads (one per core) and hands a free worker to the oldest task first:
 * each query run with every thread, two slow queries of one user held both workers of a 2-core machine, and every
 * other user's query on the graph waited 17-20 s behind them. The rule:
 *
 * - An interactive query (run/query, alertPreview, a node's or an edge's lookup) runs with INTERACTIVE_THREADS (1)
 *   worker thread, and waits its turn in its graph's queue: at most `capacity` of them run at once on a graph
 *   (the machine's cores, at least 2), and at most `capacity - 1` (at least 1) of one user's (or one API key's), so
 *   a user's slow queries always leave a worker to the others. Waiting queries are served round-robin across the
 *   users waiting, each user's in the order they came. A user still has QUERIES_PER_USER (query-slots.ts) running
 *   or waiting at most, over every graph: past that, 429.
 * - An alert run does not wait in the queue (the alert scheduler runs one at a time per process) and runs with
 *   ALERT_THREADS, every worker but one: an alert run leaves a worker to the users, and the users' queries never
 *   take more than their one thread each, so alert runs keep the rest: the alerts' reserved share.
 *
 * On 2 cores: two interactive queries run at once on a graph, at most one of them a given user's; an alert run
 * takes one worker, so while one runs, a user's query may wait for the worker a slow query of another user holds.
 * Measured (bench/README.md, "Fair share on one graph"): another user's small queries answer at p95 under 1 s while
 * one user runs four slow ones, where they waited 17-20 s before.
 */
export const INTERACTIVE_THREADS = 1;
const CORES = availableParallelism();
/** The worker threads an alert run's queries may use: all but one, which stays the users'. */
export const ALERT_THREADS = Math.max(1, CORES - 1);
/** Interactive queries running at once on one graph. */
export const GRAPH_CAPACITY = Math.max(2, CORES);

/** One graph's interactive queries: how many run, whose, and who waits. */
class GraphTurns {
  running = 0;
  readonly runningBy = new Map<string, number>();
  /** Each waiting holder's admissions, in the order they came; the map's order is the round-robin's. */
  readonly waiting = new Map<string, (() => void)[]>();
}

export class GraphShare {
  readonly #graphs = new Map<string, GraphTurns>();
  /** The most of one holder's queries running at once on a graph. */
  readonly perHolder: number;

  constructor(readonly capacity: number = GRAPH_CAPACITY) {
    this.perHolder = Math.max(1, capacity - 1);
  }

  /**
   * Runs `work` once it is `holder`'s turn on `graph` (at once when the graph and the holder have room), and gives the
   * turn back when it ends.
   */
  async run<T>(graph: string, holder: string, work: () => Promise<T>): Promise<T> {
    const turns = this.#graphs.get(graph) ?? new GraphTurns();
    this.#graphs.set(graph, turns);
    if (this.#mayRun(turns, holder) && turns.waiting.size === 0) this.#start(turns, holder);
    else await new Promise<void>((admit) => {
      const queue = turns.waiting.get(holder);
      if (queue) queue.push(admit);
      else turns.waiting.set(holder, [admit]);
      // A holder with room may still wait behind others waiting before it: it is served in its turn.
      this.#serve(turns);
    });
    try {
      return await work();
    } finally {
      turns.running--;
      const left = turns.runningBy.get(holder)! - 1;
      if (left === 0) turns.runningBy.delete(holder);
      else turns.runningBy.set(holder, left);
      this.#serve(turns);
      if (turns.running === 0 && turns.waiting.size === 0) this.#graphs.delete(graph);
    }
  }

  /** How many of `graph`'s interactive queries run, and how many wait (tests, metrics). */
  load(graph: string): { running: number; waiting: number } {
    const turns = this.#graphs.get(graph);
    let waiting = 0;
    for (const queue of turns?.waiting.values() ?? []) waiting += queue.length;
    return { running: turns?.running ?? 0, waiting };
  }

  #mayRun(turns: GraphTurns, holder: string): boolean {
    return turns.running < this.capacity && (turns.runningBy.get(holder) ?? 0) < this.perHolder;
  }

  #start(turns: GraphTurns, holder: string): void {
    turns.running++;
    turns.runningBy.set(holder, (turns.runningBy.get(holder) ?? 0) + 1);
  }

  /** Admits waiting queries while the graph has room: the first holder in turn that may run, then it goes last. */
  #serve(turns: GraphTurns): void {
    while (turns.running < this.capacity) {
      let next: string | undefined;
      for (const holder of turns.waiting.keys()) {
        if (this.#mayRun(turns, holder)) {
          next = holder;
          break;
        }
      }
      if (next === undefined) return;
      const queue = turns.waiting.get(next)!;
      const admit = queue.shift()!;
      turns.waiting.delete(next);
      if (queue.length > 0) turns.waiting.set(next, queue);
      this.#start(turns, next);
      admit();
    }
  }
}
