/**
 * A payload written as its schema declares it: compact JSON with every object's keys in the order of the schema's
 * properties (event-schemas.ts), whatever order the value was built in. The contract fixes the key order of the
 * payloads' bytes (docs/api.md, Events and payloads), so the schema that documents a payload is also what orders it,
 * and a payload that is not of its schema's shape does not compile.
 */
import type { Static, TSchema } from 'typebox';

/** A value rebuilt with its objects' keys in a schema's order. */
type Reorder = (value: unknown) => unknown;

/**
 * The reordering of `schema`'s values, worked out once: an object by its schema's properties (keys the schema does
 * not declare are left out, as the types allow none), a list item by item; undefined when a value is written as it
 * is (a scalar, a list of them: a target's thousands of ids are not copied).
 */
function reorderOf(schema: TSchema): Reorder | undefined {
  const { properties, items } = schema as { properties?: Record<string, TSchema>; items?: TSchema };
  if (properties) {
    const fields = Object.entries(properties).map(([key, property]) => [key, reorderOf(property)] as const);
    return (value) => {
      if (value === null || typeof value !== 'object') return value;
      const ordered: Record<string, unknown> = {};
      for (const [key, reorder] of fields) {
        const field = (value as Record<string, unknown>)[key];
        ordered[key] = reorder ? reorder(field) : field;
      }
      return ordered;
    };
  }
  const reorderItem = items && reorderOf(items);
  if (reorderItem) return (value) => (Array.isArray(value) ? value.map(reorderItem) : value);
  return undefined;
}

/** Writes payloads of `schema` (JSON.stringify: an undefined value's key left out, text escaped, UTF-8 kept). */
export function payloadWriter<S extends TSchema>(schema: S): (payload: Static<S>) => string {
  const reorder = reorderOf(schema);
  return (payload) => JSON.stringify(reorder ? reorder(payload) : payload);
}
