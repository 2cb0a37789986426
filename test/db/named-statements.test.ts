import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { namedStatement, type NamedStatement, type Queryable } from '../../src/db/database.js';
import { waitUntil } from '../support/processes.js';
import { useTestDatabase } from '../support/test-service.js';

// Named (server-side prepared) statements through the database seam: prepared once per session, then run by name,
// on both databases, and still right after what can happen to a session: a failed run, a transaction rolled back,
// a connection lost.
describe('named statements', () => {
  const t = useTestDatabase();

  // Each case its own names, so what one case prepared on a PostgreSQL connection does not help the next.
  const plusOne = (name: string) => namedStatement(`named_statements_test_${name}`, 'SELECT $1::int + 1 AS n');
  const run = async (conn: Queryable, statement: NamedStatement, n: unknown) => (await conn.query<{ n: number }>(statement, [n])).rows[0]!.n;
  /** How often the session planned `statement` by name (0 if it has not prepared it): one custom or generic plan a run. */
  const runsByName = async (conn: Queryable, statement: NamedStatement): Promise<number> => {
    const { rows } = await conn.query<{ runs: number }>(
      'SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE name = $1 AND statement = $2',
      [statement.name, statement.text],
    );
    return rows[0]?.runs ?? 0;
  };

  it('prepares a statement once in the session that runs it, and then runs it by name', async () => {
    const statement = plusOne('prepared_once');
    await t.db.withConnection(async (conn) => {
      expect(await runsByName(conn, statement)).toBe(0);
      expect(await run(conn, statement, 41)).toBe(42);
      expect(await run(conn, statement, 1)).toBe(2);
      expect(await run(conn, statement, -1)).toBe(0);
      expect(await runsByName(conn, statement)).toBe(3);
    });
    // And on whichever connection the database hands out.
    for (let i = 0; i < 3; i++) expect(await run(t.db, statement, i)).toBe(i + 1);
  });

  it('refuses a name already taken by another statement', () => {
    plusOne('taken');
    expect(() => namedStatement('named_statements_test_taken', 'SELECT $1::int + 2 AS n')).toThrow('already taken');
    // The same text again is the same statement.
    expect(plusOne('taken')).toEqual({ name: 'named_statements_test_taken', text: 'SELECT $1::int + 1 AS n' });
  });

  it('runs again after a run failed: on a bad parameter, in its execution, or before it could be prepared', async () => {
    // (From a set-returning function, so the division is not folded into a constant while planning: it fails running.)
    const inverse = namedStatement('named_statements_test_inverse', 'SELECT 100 / n AS n FROM generate_series($1::int, $1::int) n');
    const missing = namedStatement('named_statements_test_missing', 'SELECT count(*)::int AS n FROM named_statements_test_table WHERE $1::int > 0');
    await t.db.withConnection(async (conn) => {
      // Its first run: parsed, then refused at Bind (22P02 invalid_text_representation).
      await expect(conn.query(inverse, ['not a number'])).rejects.toMatchObject({ code: '22P02' });
      await expect(conn.query(inverse, [0])).rejects.toMatchObject({ code: '22012' });
      expect(await run(conn, inverse, 4)).toBe(25);
      // Parsing failed (no such table): not taken as prepared, so it is parsed again once the table is there.
      await expect(conn.query(missing, [1])).rejects.toMatchObject({ code: '42P01' });
      expect(await runsByName(conn, missing)).toBe(0);
      await conn.query('CREATE TABLE named_statements_test_table (id int)');
      await conn.query('INSERT INTO named_statements_test_table VALUES (1), (2)');
      expect(await run(conn, missing, 1)).toBe(2);
      // Planned for the division by zero and for the last run; the refused Bind never got to a plan.
      expect(await runsByName(conn, inverse)).toBe(2);
    });
    await expect(t.db.query(inverse, [0])).rejects.toMatchObject({ code: '22012' });
    expect(await run(t.db, inverse, 5)).toBe(20);
  });

  it('runs in transactions, and after one rolled back, whether it was first prepared there or refused there', async () => {
    const inRolledBack = plusOne('in_rolled_back');
    const inAborted = plusOne('in_aborted');
    await t.db.withConnection(async (conn) => {
      // First prepared inside a transaction that then rolls back: prepared statements are not transactional.
      await conn.query('BEGIN');
      expect(await run(conn, inRolledBack, 1)).toBe(2);
      await conn.query('ROLLBACK');
      expect(await runsByName(conn, inRolledBack)).toBe(1);
      expect(await run(conn, inRolledBack, 2)).toBe(3);
      // Refused, unprepared, inside a transaction already failed (25P02 in_failed_sql_transaction): prepared after.
      await conn.query('BEGIN');
      await expect(conn.query('SELECT 1 / 0')).rejects.toMatchObject({ code: '22012' });
      await expect(conn.query(inAborted, [1])).rejects.toMatchObject({ code: '25P02' });
      await conn.query('ROLLBACK');
      expect(await runsByName(conn, inAborted)).toBe(0);
      expect(await run(conn, inAborted, 3)).toBe(4);
      expect(await runsByName(conn, inAborted)).toBe(1);
    });

    const inTransaction = plusOne('in_transaction');
    expect(await t.db.transaction(async (tx) => [await run(tx, inTransaction, 1), await run(tx, inTransaction, 2)])).toEqual([2, 3]);
    await expect(
      t.db.transaction(async (tx) => {
        await run(tx, inTransaction, 3);
        await tx.query(inTransaction, ['not a number']);
      }),
    ).rejects.toMatchObject({ code: '22P02' });
    expect(await t.db.transaction((tx) => run(tx, inTransaction, 4))).toBe(5);
    expect(await run(t.db, inTransaction, 5)).toBe(6);
  });

  // PostgreSQL only: PGlite's session lives in this process and cannot be cut from outside.
  if (process.env.TEST_DB === 'postgres') it('PostgreSQL: prepares the statement again on the connections that replace lost ones', async () => {
    const statement = plusOne('connection_lost');
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      // Prepared on a few of the pool's connections (run side by side, they take several).
      expect(await Promise.all([1, 2, 3, 4].map((n) => run(t.db, statement, n)))).toEqual([2, 3, 4, 5]);
      const before = await t.db.withConnection(async (conn) => {
        expect(await run(conn, statement, 0)).toBe(1);
        return (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      });
      const backends = async () =>
        (await other.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);
      const lost = await backends();
      expect(lost).toContain(before);
      await other.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      await waitUntil(async () => (await backends()).every((pid) => !lost.includes(pid)), 'the backends are gone', 5_000, 20);
      // The pool drops a lost idle connection when pg reports it (the server's FATAL reaches it before the close).
      await new Promise((resolve) => setTimeout(resolve, 100));

      expect(await Promise.all([1, 2, 3, 4].map((n) => run(t.db, statement, n)))).toEqual([2, 3, 4, 5]);
      await t.db.withConnection(async (conn) => {
        const pid = (await conn.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        expect(lost).not.toContain(pid);
        expect(await run(conn, statement, 9)).toBe(10);
        expect(await runsByName(conn, statement)).toBeGreaterThanOrEqual(1);
      });
    } finally {
      await other.end();
    }
  });

  // PGlite only: PostgreSQL runs its own autovacuum. The embedded one counts writes from the statement's text.
  if (process.env.TEST_DB === 'pglite') it('embedded: counts the writes of a named statement toward analysing its table', async () => {
    const estimate = async () =>
      (await t.db.query<{ reltuples: number }>(`SELECT reltuples::int AS reltuples FROM pg_class WHERE oid = 'webhook_events'::regclass`)).rows[0]!.reltuples;
    expect(await estimate()).toBeLessThan(500);
    const insertEvents = namedStatement(
      'named_statements_test_insert_events',
      `INSERT INTO webhook_events (event_type, payload) SELECT 'newCase', '{}' FROM generate_series(1, $1::int)`,
    );
    await t.db.query(insertEvents, [500]);
    await waitUntil(async () => (await estimate()) === 500, 'webhook_events is analysed', 15_000);
  });
});
