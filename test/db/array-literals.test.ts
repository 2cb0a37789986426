import { describe, expect, it } from 'vitest';
import { integerArray, jsonTextArray, nullableIntegerArray, textArray } from '../../src/db/array-literals.js';
import { useTestDatabase } from '../support/test-service.js';

// The array literals the alert run's bulk statements send instead of pg's own: what the database reads back must be
// exactly the strings given, whatever they hold.
describe('array literals', () => {
  const t = useTestDatabase();
  const tricky = ['Account:1', 'TRANSFER:Account:1->Account:2', '', ' lead', 'trail ', 'in side', 'a,b', '{x}', 'q"uote', 'back\\slash', '\\"', 'NULL', 'null', 'Null', 'nul', 'tab\tnew\nline', 'quote"and\nline', '{"json":"text","n":[1,"\\"]}', 'é—𝄞', '"𝄞"', '%7B', '"'];

  it('reads back every string as given, one by one and as lists inside a list', async () => {
    const { rows } = await t.db.query<{ items: string[] }>('SELECT $1::text[] AS items', [textArray(tricky)]);
    expect(rows[0]!.items).toEqual(tricky);
    const lists = [tricky, [], ['NULL'], tricky.slice(3, 9)];
    const { rows: nested } = await t.db.query<{ items: string[] }>('SELECT l::text[] AS items FROM unnest($1::text[]) WITH ORDINALITY AS u(l, i) ORDER BY i', [
      textArray(lists.map(textArray)),
    ]);
    expect(nested.map((r) => r.items)).toEqual(lists);
  });

  it('reads back integers', async () => {
    const { rows } = await t.db.query<{ n: number[] }>('SELECT $1::bigint[] AS n', [integerArray([0, -1, 2 ** 40, 7])]);
    expect(rows[0]!.n.map(Number)).toEqual([0, -1, 2 ** 40, 7]);
    const { rows: some } = await t.db.query<{ n: (number | null)[] }>('SELECT $1::int[] AS n', [nullableIntegerArray([3, null, 5])]);
    expect(some[0]!.n).toEqual([3, null, 5]);
  });

  it('reads back nulls among numbers and strings (an outcome batch: epoch milliseconds, statuses, errors)', async () => {
    const numbers = [Date.now(), null, 0, -3, 2 ** 53 - 1];
    const { rows } = await t.db.query<{ n: (number | null)[]; s: (string | null)[] }>('SELECT $1::float8[] AS n, $2::text[] AS s', [
      nullableIntegerArray(numbers),
      textArray([null, 'NULL', 'receiver answered 500', null, '"']),
    ]);
    expect(rows[0]!.n).toEqual(numbers);
    expect(rows[0]!.s).toEqual([null, 'NULL', 'receiver answered 500', null, '"']);
  });

  it('reads back JSON texts as JSON.stringify wrote them (the attempt log entries of an outcome batch)', async () => {
    const values = [{ s: tricky, lone: '\ud800 x \udc00', ctl: '\u0000\u001f\u007f', sep: '\u2028\u2029' }, {}, [], 'text', 3, null, { nested: { '"': '\\' } }];
    const { rows } = await t.db.query<{ items: string[] }>('SELECT $1::text[] AS items', [jsonTextArray(values)]);
    expect(rows[0]!.items).toEqual(values.map((v) => JSON.stringify(v)));
    expect(jsonTextArray([])).toBe('{}');
  });
});
