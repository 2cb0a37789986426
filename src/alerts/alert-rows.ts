/**
 * A result row of an alert's query as a match: its identity is every node and edge in it (through paths and
 * lists); its case key the `target` variable's nodes and edges, or the whole match; its columns the scalar values
 * the alert picks, typed as the alert says.
 */
import { byNames, holdsGraphItems, plainValue, type GraphRow } from '../graph/items.js';
import type { PropertyValue } from '../graph/graph-schemas.js';
import { targetOfValues } from '../graph/row-identity.js';
import type { AlertColumn } from './alerts.js';
import type { FoundMatch } from './record-matches.js';

export function columnValues(row: GraphRow, columns: readonly AlertColumn[]): Record<string, PropertyValue> {
  // By the alert's column names, which may be any returned name (`__proto__` too).
  const values = byNames<PropertyValue>();
  for (const column of columns) {
    const value = row[column.columnName] === undefined ? null : plainValue(row[column.columnName]!);
    if (value === null) values[column.columnName] = null;
    else if (column.type === 'number') values[column.columnName] = typeof value === 'number' ? value : Number.isFinite(Number(value)) ? Number(value) : null;
    else values[column.columnName] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return values;
}

/** The match a row is, or undefined when the row holds no node or edge (it names nothing a case could be about). */
export function matchOfRow(row: GraphRow, target: string | null, columns: readonly AlertColumn[]): FoundMatch | undefined {
  const identity = targetOfValues(Object.values(row));
  if (identity.nodes.length + identity.edges.length === 0) return undefined;
  const targetValue = target === null ? undefined : row[target];
  const caseKey = targetValue !== undefined && holdsGraphItems(targetValue) ? targetOfValues([targetValue]) : identity;
  return { identity, caseKey, columns: columnValues(row, columns) };
}
