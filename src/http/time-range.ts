import { invalidParameter } from '../errors.js';

/** A `since`/`until` pair as the request gave it (ISO 8601 text). */
export interface TimeRangeText {
  since?: string | undefined;
  until?: string | undefined;
}

/**
 * `since` and `until` as instants, each refused (naming it, as a body field or a query parameter) when it is not an
 * ISO 8601 date-time, and the pair when they are in the wrong order.
 */
export function timeRangeOf(input: TimeRangeText, where: 'field' | 'query parameter'): { since?: Date; until?: Date } {
  const instant = (name: 'since' | 'until'): Date | undefined => instantOf(input[name], name, where);
  const since = instant('since');
  const until = instant('until');
  if (since && until && since >= until) throw invalidParameter(`${where} since must be before ${where} until`, 'since');
  return { ...(since ? { since } : {}), ...(until ? { until } : {}) };
}

/** `text` as an instant, or undefined when not given; refused (naming `name`) when it is not an ISO 8601 date-time. */
export function instantOf(text: string | undefined, name: string, where: 'field' | 'query parameter'): Date | undefined {
  if (text === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) throw invalidParameter(`${where} ${name} must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z, got ${JSON.stringify(text)}`, name);
  return new Date(ms);
}
