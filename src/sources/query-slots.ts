import { AppError } from '../errors.js';

/**
 * How many interactive graph queries (run/query, alertPreview) one user may have running at once. A query may be
 * given minutes (`timeout`), and each holds a connection and a core of the graph's engine: without a bound, one
 * signed-in user could start hundreds and starve every alert and every other user of the graph.
 */
export const QUERIES_PER_USER = 4;

export class QuerySlots {
  readonly #running = new Map<number, number>();

  constructor(readonly perUser: number = QUERIES_PER_USER) {}

  /** Takes one of `userId`'s slots for the length of `work`, or answers 429 when they are all taken. */
  async hold<T>(userId: number, work: () => Promise<T>): Promise<T> {
    const held = this.#running.get(userId) ?? 0;
    if (held >= this.perUser) {
      throw new AppError('too_many_requests', `you already have ${held} graph queries running (at most ${this.perUser} at once): wait for one to end`);
    }
    this.#running.set(userId, held + 1);
    try {
      return await work();
    } finally {
      const left = this.#running.get(userId)! - 1;
      if (left === 0) this.#running.delete(userId);
      else this.#running.set(userId, left);
    }
  }
}
