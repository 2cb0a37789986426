import pg from 'pg';

/** A statement and its count over a window (pg_stat_statements only). */
export interface StatementCount {
  query: string;
  calls: number;
}

/**
 * The statements one database ran, counted by the server: from `pg_stat_statements` where the server loads it
 * (`shared_preload_libraries`), else from `pg_stat_database`'s transaction counters (commits and rollbacks), which
 * count a statement outside a transaction once and a whole transaction once. The hot paths of every contestant in the
 * bench (a claim, a batch of outcomes, a fetch, a completion) are single statements, so both count them alike.
 *
 * The transaction counters are flushed by each backend at most once a second while it is busy and ten seconds after
 * it turns idle, and at its exit: read them after the contestant's process has stopped (its backends have ended).
 * pg_stat_statements counts each statement as it ends.
 */
export class StatementCounter {
  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
    readonly source: 'pg_stat_statements' | 'pg_stat_database',
  ) {}

  /**
   * Counts the statements of `database` (which exists) on the server of `serverUrl`. The transaction counters are read
   * from the server URL's own database, so the reads are not counted; pg_stat_statements through `database`, where
   * its extension is made, leaving the reads out by their text.
   */
  static async open(serverUrl: string, database: string): Promise<StatementCounter> {
    const server = new pg.Client({ connectionString: serverUrl });
    await server.connect();
    const { rows } = await server.query<{ libraries: string }>(`SELECT current_setting('shared_preload_libraries') AS libraries`);
    // Only where the server loads it: the view fails otherwise, and the extension would be left for nothing.
    if (!rows[0]!.libraries.split(',').some((l) => l.trim() === 'pg_stat_statements')) return new StatementCounter(server, database, 'pg_stat_database');
    await server.end();
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return new StatementCounter(client, database, 'pg_stat_statements');
  }

  /** The database's statements so far (or its transactions, see the class). */
  async total(): Promise<number> {
    if (this.source === 'pg_stat_statements') return (await this.byStatement()).reduce((n, s) => n + s.calls, 0);
    await this.client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await this.client.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [this.database]);
    return Number(rows[0]!.n);
  }

  /** pg_stat_statements only: each statement's calls so far, the counter's own reads left out. */
  async byStatement(): Promise<StatementCount[]> {
    if (this.source !== 'pg_stat_statements') return [];
    const { rows } = await this.client.query<{ query: string; calls: string }>(
      `SELECT query, sum(calls) AS calls FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_stat_clear_snapshot%'
       GROUP BY query`,
      [this.database],
    );
    return rows.map((r) => ({ query: r.query, calls: Number(r.calls) }));
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/** The statements that ran between two readings of byStatement, most calls first. */
export function statementsBetween(before: StatementCount[], after: StatementCount[]): StatementCount[] {
  const earlier = new Map(before.map((s) => [s.query, s.calls]));
  return after
    .map((s) => ({ query: s.query, calls: s.calls - (earlier.get(s.query) ?? 0) }))
    .filter((s) => s.calls > 0)
    .sort((a, b) => b.calls - a.calls);
}
