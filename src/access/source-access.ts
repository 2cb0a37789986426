import { ANALYST_GROUP_ID } from '../auth/groups.js';
import { isAdmin, type Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { ACTIONS, ANALYST_ACTIONS, ANY_TARGET, ITEM_LEVELS, type Action, type ItemLevel, type TargetType } from './access-rights.js';

/**
 * What one principal may do on one data source, resolved once per request from its groups (docs/security.md, Access
 * model). Admin: everything. The built-in Analyst: read every alert, case, node, edge and property, and run read
 * queries, on every source (what every signed-in user could before groups existed). A custom group: what its access
 * rights say, on its own source only. Several groups: the most each grants.
 */
export interface SourceAccess {
  readonly sourceKey: string;
  readonly admin: boolean;
  /** Every node, edge and property is readable: answers need no filtering (the fast path of run/query). */
  readonly readsWholeGraph: boolean;
  /** The alerts readable: every alert of the source, or these. */
  readonly alerts: 'all' | ReadonlySet<number>;
  may(action: Action): boolean;
  readsAlert(alertId: number): boolean;
  /** A node is readable when each of its categories is (a node without any: when `*` is). */
  readsNode(categories: readonly string[]): boolean;
  readsEdgeType(type: string): boolean;
  /** A property of an item readable as a whole: readable unless property-key rights are on and none grants it. */
  readsProperty(kind: 'node' | 'edge', itemTypes: readonly string[], key: string): boolean;
}

const FULL_READ: Omit<SourceAccess, 'sourceKey' | 'admin' | 'may'> = {
  readsWholeGraph: true,
  alerts: 'all',
  readsAlert: () => true,
  readsNode: () => true,
  readsEdgeType: () => true,
  readsProperty: () => true,
};

/** Admin's access, or the built-in Analyst's, without asking the database; undefined for a custom group's member. */
export function builtinAccess(principal: Principal, sourceKey: string): SourceAccess | undefined {
  if (isAdmin(principal)) return { ...FULL_READ, sourceKey, admin: true, may: () => true };
  if (principal.groupIds.includes(ANALYST_GROUP_ID)) return { ...FULL_READ, sourceKey, admin: false, may: (action) => ANALYST_ACTIONS.includes(action) };
  return undefined;
}

interface RightRow {
  property_key_access_rights: boolean;
  group_id: number | null;
  target_type: TargetType | null;
  target_item_type: string | null;
  target_name: string | null;
  type: string | null;
}

/**
 * The principal's access to `sourceKey`, or undefined when the source does not exist or none of its groups is on it:
 * the caller answers both alike (as if the source did not exist). One statement for a custom group's member.
 */
export async function loadSourceAccess(db: Queryable, principal: Principal, sourceKey: string): Promise<SourceAccess | undefined> {
  const builtin = builtinAccess(principal, sourceKey);
  if (builtin) return builtin;
  const { rows } = await db.query<RightRow>(
    `SELECT s.property_key_access_rights, g.id AS group_id, r.target_type, r.target_item_type, r.target_name, r.type
     FROM data_sources s
     LEFT JOIN groups g ON g.source_key = s.key AND g.id = ANY($2::int[])
     LEFT JOIN group_access_rights r ON r.group_id = g.id
     WHERE s.key = $1`,
    [sourceKey, principal.groupIds],
  );
  if (!rows.some((row) => row.group_id !== null)) return undefined;
  return accessFromRights(sourceKey, rows[0]!.property_key_access_rights, rows);
}

/** The keys of the sources the principal sees: every one ('all') or these. */
export async function visibleSourceKeys(db: Queryable, principal: Principal): Promise<'all' | Set<string>> {
  if (builtinAccess(principal, '')) return 'all';
  const { rows } = await db.query<{ source_key: string }>('SELECT DISTINCT source_key FROM groups WHERE id = ANY($1::int[]) AND source_key IS NOT NULL', [
    principal.groupIds,
  ]);
  return new Set(rows.map((row) => row.source_key));
}

const levelRank = (level: string | undefined): number => (level === undefined ? -1 : ITEM_LEVELS.indexOf(level as ItemLevel));

/** One group's rights, by target: the specific right of a target wins over the group's `*` for it. */
class GroupRights {
  readonly byTarget = new Map<string, string>();
  set(type: TargetType, itemType: string, name: string, level: string): void {
    this.byTarget.set(`${type}\u0000${itemType}\u0000${name}`, level);
  }
  get(type: TargetType, itemType: string, name: string): string | undefined {
    return this.byTarget.get(`${type}\u0000${itemType}\u0000${name}`);
  }
  /** The level of `name`: its own right, else the group's `*`, else none. */
  level(type: TargetType, name: string): number {
    return Math.max(0, levelRank(this.get(type, '', name) ?? this.get(type, '', ANY_TARGET)));
  }
  /** A property key's right: (item type, key), then (item type, *), then (*, key), then (*, *). */
  property(type: TargetType, itemType: string, key: string): number {
    const level = this.get(type, itemType, key) ?? this.get(type, itemType, ANY_TARGET) ?? this.get(type, ANY_TARGET, key) ?? this.get(type, ANY_TARGET, ANY_TARGET);
    return Math.max(0, levelRank(level));
  }
}

const READ = ITEM_LEVELS.indexOf('read');

export function accessFromRights(sourceKey: string, propertyKeyRights: boolean, rows: readonly RightRow[]): SourceAccess {
  const groups = new Map<number, GroupRights>();
  for (const row of rows) {
    if (row.group_id === null) continue;
    const group = groups.get(row.group_id) ?? new GroupRights();
    groups.set(row.group_id, group);
    if (row.target_type && row.target_name !== null && row.type) group.set(row.target_type, row.target_item_type ?? '', row.target_name, row.type);
  }
  const all = [...groups.values()];
  const best = (rank: (group: GroupRights) => number) => all.reduce((max, group) => Math.max(max, rank(group)), 0);
  const memo = <T>(compute: (key: string) => T) => {
    const seen = new Map<string, T>();
    return (key: string) => {
      let value = seen.get(key);
      if (value === undefined) seen.set(key, (value = compute(key)));
      return value;
    };
  };
  const categoryReadable = memo((category) => best((group) => group.level('nodeCategory', category)) >= READ);
  const typeReadable = memo((type) => best((group) => group.level('edgeType', type)) >= READ);
  const actions = new Set(ACTIONS.filter((action) => all.some((group) => group.get('action', '', action) === 'do')));
  const everyAlert = all.some((group) => group.get('alert', '', ANY_TARGET) === 'read');
  const alertIds = new Set<number>();
  for (const group of all) {
    for (const [key, level] of group.byTarget) {
      const [type, , name] = key.split('\u0000');
      if (type === 'alert' && level === 'read' && name !== ANY_TARGET) alertIds.add(Number(name));
    }
  }
  // A specific `none` does not take back what the group's `*` gives for alerts: LKE's alert rights are read or none,
  // per alert, and a group's `*` means every alert, present and future.
  const alerts: 'all' | ReadonlySet<number> = everyAlert ? 'all' : alertIds;
  const everyCategory = all.some((group) => levelRank(group.get('nodeCategory', '', ANY_TARGET)) >= READ && ![...group.byTarget].some(([k, v]) => k.startsWith('nodeCategory\u0000') && levelRank(v) < READ));
  const everyType = all.some((group) => levelRank(group.get('edgeType', '', ANY_TARGET)) >= READ && ![...group.byTarget].some(([k, v]) => k.startsWith('edgeType\u0000') && levelRank(v) < READ));
  return {
    sourceKey,
    admin: false,
    readsWholeGraph: everyCategory && everyType && !propertyKeyRights,
    alerts,
    may: (action) => actions.has(action),
    readsAlert: (alertId) => alerts === 'all' || alerts.has(alertId),
    readsNode: (categories) => (categories.length ? categories.every(categoryReadable) : categoryReadable(ANY_TARGET)),
    readsEdgeType: typeReadable,
    readsProperty: (kind, itemTypes, key) => {
      if (!propertyKeyRights) return true;
      const type: TargetType = kind === 'node' ? 'nodePropertyKey' : 'edgePropertyKey';
      const types = itemTypes.length ? itemTypes : [ANY_TARGET];
      // A property is readable when one of the item's categories grants it (a node's categories each carry their keys).
      return types.some((itemType) => best((group) => group.property(type, itemType, key)) >= READ);
    },
  };
}
