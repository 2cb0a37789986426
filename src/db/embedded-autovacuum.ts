/**
 * PGlite runs no autovacuum: without it the embedded database never gathers statistics (measured here: a claim
 * over 100,000 pending deliveries planned as a bitmap scan and an external sort, 105 ms, against 4 ms once
 * analysed) and never reclaims dead rows. So the embedded database does autovacuum's job itself, by its default
 * rule: ANALYZE once more than 50 + 10% of the rows changed, VACUUM (ANALYZE) once more than 50 + 20% were
 * updated or deleted. PGlite's own counters of changes do not move in-process, so the writes are counted here.
 */
export class EmbeddedAutovacuum {
  #changed = 0;
  #dead = 0;
  #rows = 1000;
  #running = false;

  constructor(private readonly run: (sql: string) => Promise<{ rows: { rows?: number }[] }>) {}

  /** Called with each statement's command tag and row count. */
  noteWrite(command: string | null | undefined, rowCount: number): void {
    if (command === 'INSERT') {
      this.#changed += rowCount;
    } else if (command === 'UPDATE' || command === 'DELETE') {
      this.#changed += rowCount;
      this.#dead += rowCount;
    } else {
      return;
    }
    if (!this.#running && (this.#changed > 50 + 0.1 * this.#rows || this.#dead > 50 + 0.2 * this.#rows)) void this.#maintain();
  }

  async #maintain(): Promise<void> {
    this.#running = true;
    const vacuum = this.#dead > 50 + 0.2 * this.#rows;
    this.#changed = 0;
    if (vacuum) this.#dead = 0;
    try {
      // Not in a transaction: VACUUM cannot be. On the one connection it simply waits for the work before it.
      await this.run(vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE');
      const { rows } = await this.run(`SELECT coalesce(sum(reltuples), 0)::bigint AS rows FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`);
      this.#rows = Math.max(1000, Number(rows[0]?.rows ?? 0));
    } catch {
      // Closed under us, or busy: the next writes try again.
    } finally {
      this.#running = false;
    }
  }
}
