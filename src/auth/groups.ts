/** The two built-in groups (docs/api.md, Sign-in, users and API keys). They are rows too, for the foreign keys, but never change. */
export const ADMIN_GROUP_ID = 1;
export const ANALYST_GROUP_ID = 2;

/** Groups one user or API key may be given in one call. */
export const MAX_GROUPS_PER_MEMBER = 10;

export const BUILTIN_GROUPS: Readonly<Record<number, string>> = Object.freeze({ [ADMIN_GROUP_ID]: 'Admin', [ANALYST_GROUP_ID]: 'Analyst' });

export interface Group {
  id: number;
  name: string;
  builtin: true;
}

export function groupsOf(ids: readonly number[]): Group[] {
  return [...new Set(ids)].sort((a, b) => a - b).map((id) => ({ id, name: BUILTIN_GROUPS[id] ?? `group ${id}`, builtin: true }));
}

export function isKnownGroup(id: number): boolean {
  return Object.hasOwn(BUILTIN_GROUPS, id);
}
