/**
 * PGlite runs no autovacuum: without it the embedded database never gathers statistics (measured here: a claim
 * over 100,000 pending deliveries planned as a bitmap scan and an external sort, 105 ms, against 4 ms once
 * analysed) and never reclaims dead rows. So the embedded database does autovacuum's job itself, by its default
 * rule, per table: ANALYZE once more than 50 + 10% of its rows changed, VACUUM (ANALYZE) once more than 50 + 20%
 * were updated or deleted. PGlite's own counters of changes do not move in-process, so the writes are counted here,
 * from each statement's text (the tables it writes), command tag and row count.
 *
 * Per table and with a nap, as autovacuum does: a database-wide ANALYZE cost nearly twice the queue's alone,
 * and without a nap a drain ran one ANALYZE or VACUUM every ~1,500 deliveries and a large cleanup a VACUUM every 20%
 * (bench/README.md, "The embedded database").
 */
const NAP_MS = 10_000;
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE = 0.1;
const VACUUM_THRESHOLD = 50;
const VACUUM_SCALE = 0.2;

interface TableCounts {
  changed: number;
  dead: number;
  /** The planner's row count (pg_class.reltuples) after the last maintenance; 0 until then, as for a new table. */
  rows: number;
}

// The tables a statement writes: every INSERT INTO / UPDATE / DELETE FROM target, CTEs included. The words that
// can follow UPDATE without being a table (ON CONFLICT DO UPDATE SET, FOR UPDATE SKIP LOCKED / NOWAIT / OF) are not.
const WRITE_TARGET = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)/gi;
const NOT_TABLES = new Set(['set', 'skip', 'nowait', 'of', 'only']);

export function tablesWrittenBy(sql: string): string[] {
  const tables = new Set<string>();
  for (const [, name] of sql.matchAll(WRITE_TARGET)) {
    const table = name!.toLowerCase();
    if (!NOT_TABLES.has(table)) tables.add(table);
  }
  return [...tables];
}

export class EmbeddedAutovacuum {
  readonly #tables = new Map<string, TableCounts>();
  readonly #tablesBySql = new Map<string, string[]>();
  #running = false;
  #lastRunAt = -Infinity;
  #wakeUp: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(private readonly run: (sql: string) => Promise<{ rows: Record<string, unknown>[] }>) {}

  /** Called with each statement's text, command tag and row count. */
  noteWrite(sql: string, command: string | null | undefined, rowCount: number): void {
    if (rowCount === 0 || (command !== 'INSERT' && command !== 'UPDATE' && command !== 'DELETE')) return;
    let tables = this.#tablesBySql.get(sql);
    if (!tables) {
      tables = tablesWrittenBy(sql);
      // Statements are the code's own, so this holds a few dozen texts.
      this.#tablesBySql.set(sql, tables);
    }
    for (const table of tables) {
      let counts = this.#tables.get(table);
      if (!counts) this.#tables.set(table, (counts = { changed: 0, dead: 0, rows: 0 }));
      counts.changed += rowCount;
      if (command !== 'INSERT') counts.dead += rowCount;
    }
    this.#schedule();
  }

  /** Stops maintenance; a run in progress finishes. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#wakeUp);
  }

  #schedule(): void {
    if (this.#running || this.#wakeUp || this.#closed || !this.#due().length) return;
    const wait = this.#lastRunAt + NAP_MS - performance.now();
    if (wait <= 0) {
      void this.#maintain();
      return;
    }
    // Woken after the nap even if no write comes: the last burst (a cleanup) still gets its VACUUM.
    this.#wakeUp = setTimeout(() => {
      this.#wakeUp = undefined;
      this.#schedule();
    }, wait);
    this.#wakeUp.unref();
  }

  #due(): { table: string; vacuum: boolean }[] {
    const due: { table: string; vacuum: boolean }[] = [];
    for (const [table, counts] of this.#tables) {
      const vacuum = counts.dead > VACUUM_THRESHOLD + VACUUM_SCALE * counts.rows;
      if (vacuum || counts.changed > ANALYZE_THRESHOLD + ANALYZE_SCALE * counts.rows) due.push({ table, vacuum });
    }
    return due;
  }

  async #maintain(): Promise<void> {
    this.#running = true;
    try {
      for (const { table, vacuum } of this.#due()) {
        if (this.#closed) break;
        const counts = this.#tables.get(table)!;
        counts.changed = 0;
        if (vacuum) counts.dead = 0;
        try {
          // Not in a transaction: VACUUM cannot be. On the one session it simply waits for the work before it.
          await this.run(`${vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE'} "${table}"`);
          const { rows } = await this.run(`SELECT reltuples FROM pg_class WHERE oid = '"${table}"'::regclass`);
          counts.rows = Math.max(0, Number(rows[0]?.reltuples ?? 0));
        } catch {
          // Not a table after all, or the database closed under us: forget it; later writes count afresh.
          this.#tables.delete(table);
        }
      }
    } finally {
      this.#running = false;
      this.#lastRunAt = performance.now();
      this.#schedule();
    }
  }
}
