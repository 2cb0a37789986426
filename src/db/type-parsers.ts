import pg from 'pg';

// int8 (COUNT(*), bigint ids) as a number rather than a string: ids stay far below 2^53, and one type
// everywhere beats a string that leaks into JSON answers. Same parsers for pg and PGlite (its adapter parses with pg).
const INT8_OID = 20;
const NUMERIC_OID = 1700;

export const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};
