import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { GraphShare } from './graph-share.js';

/**
 * How many interactive graph queries (run/query, alertPreview, lookups) one user may have running or waiting at once,
 * over every graph. A query may be given minutes (`timeout`), and each holds a connection and a core of the graph's
 * engine: without a bound, one signed-in user could start hundreds and starve every alert and every other user of the
 * graph. Within a graph, the queries admitted take turns (graph-share.ts).
 */
export const QUERIES_PER_USER = 4;

/**
 * Whose slots a request takes: the user's, or, through an API key, the key's own. A key may act as any user whose
 * email it names, so counting by user would give one key 4 slots per user of the service.
 */
function holderOf(principal: Principal): string {
  return principal.application ? `application:${principal.application.id}` : `user:${principal.userId}`;
}

export class QuerySlots {
  readonly #running = new Map<string, number>();

  constructor(
    readonly perUser: number = QUERIES_PER_USER,
    readonly share: GraphShare = new GraphShare(),
  ) {}

  /**
   * Takes one of the caller's slots (its user's, or its API key's) for the length of `work`, 429 when all are taken;
   * `work` runs in its turn on the graph of data source `sourceKey` (graph-share.ts), with the slot held meanwhile.
   */
  async hold<T>(principal: Principal, sourceKey: string, work: () => Promise<T>): Promise<T> {
    const holder = holderOf(principal);
    const held = this.#running.get(holder) ?? 0;
    if (held >= this.perUser) {
      const who = principal.application ? 'this API key already has' : 'you already have';
      throw new AppError('too_many_requests', `${who} ${held} graph queries running (at most ${this.perUser} at once): wait for one to end`);
    }
    this.#running.set(holder, held + 1);
    try {
      return await this.share.run(sourceKey, holder, work);
    } finally {
      const left = this.#running.get(holder)! - 1;
      if (left === 0) this.#running.delete(holder);
      else this.#running.set(holder, left);
    }
  }
}
