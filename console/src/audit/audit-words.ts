// An audit entry's before and after as lines a person reads: what changed, what was added, what was removed.

export interface ChangeLine {
  /** The field (top-level key) the line is about; '' for a value that is not an object. */
  field: string;
  kind: 'changed' | 'set' | 'removed' | 'added-item' | 'removed-item';
  text: string;
}

/** The longest value shown in a line; the whole is in the entry's details. */
const SHOWN = 160;

/** An access right as a group's page names it: "alert 3: read", "nodePropertyKey Person.name: read". */
function showRight(value: unknown): string | undefined {
  if (!isRecord(value) || typeof value.targetType !== 'string' || typeof value.targetName !== 'string' || typeof value.type !== 'string') return undefined;
  const item = typeof value.targetItemType === 'string' ? `${value.targetItemType}.` : '';
  return `${value.targetType} ${item}${value.targetName}: ${value.type}`;
}

export function showValue(value: unknown): string {
  const text = value === undefined ? '—' : (showRight(value) ?? JSON.stringify(value) ?? String(value));
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 1)}…` : text;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Two lists (a group's access rights): the items one has and the other not, each a line. */
function listChanges(field: string, before: unknown[], after: unknown[]): ChangeLine[] {
  const had = new Set(before.map((item) => JSON.stringify(item)));
  const has = new Set(after.map((item) => JSON.stringify(item)));
  return [
    ...after.filter((item) => !had.has(JSON.stringify(item))).map((item): ChangeLine => ({ field, kind: 'added-item', text: showValue(item) })),
    ...before.filter((item) => !has.has(JSON.stringify(item))).map((item): ChangeLine => ({ field, kind: 'removed-item', text: showValue(item) })),
  ];
}

/** A user id recorded in an entry (`assignedUserId`) as that user's name, when the page knows it. */
export type UserName = (id: number) => string | undefined;

function fieldChanges(field: string, before: unknown, after: unknown, userName: UserName): ChangeLine[] {
  if (same(before, after)) return [];
  if (Array.isArray(before) && Array.isArray(after)) return listChanges(field, before, after);
  const show = (value: unknown) => (/UserId$/.test(field) && typeof value === 'number' ? (userName(value) ?? `user #${value}`) : value === null && /UserId$/.test(field) ? 'nobody' : showValue(value));
  if (before === undefined) return [{ field, kind: 'set', text: show(after) }];
  if (after === undefined) return [{ field, kind: 'removed', text: show(before) }];
  return [{ field, kind: 'changed', text: `${show(before)} → ${show(after)}` }];
}

/**
 * What an entry changed: for objects, each top-level field whose value differs (a list, item by item); a creation
 * (no before) lists what was set, a deletion (no after) what was removed.
 */
export function describeChange(before: unknown, after: unknown, userName: UserName = () => undefined): ChangeLine[] {
  if (isRecord(before) || isRecord(after)) {
    const was = isRecord(before) ? before : {};
    const is = isRecord(after) ? after : {};
    const fields = [...new Set([...Object.keys(was), ...Object.keys(is)])];
    return fields.flatMap((field) => fieldChanges(field, was[field], is[field], userName));
  }
  return fieldChanges('', before, after, userName);
}

export const CHANGE_MARK: Record<ChangeLine['kind'], string> = { changed: '', set: '', removed: 'removed ', 'added-item': '+ ', 'removed-item': '− ' };
