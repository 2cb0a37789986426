import { ADMIN_GROUP_ID, ANALYST_GROUP_ID } from '../auth/groups.js';
import type { Queryable } from '../db/database.js';
import { ACTIONS, ADMIN_ACTIONS, ANALYST_ACTIONS, ANY_TARGET, ITEM_LEVELS, type ItemLevel } from './access-rights.js';

/**
 * What a user may do, per data source, in the two shapes LKE's `User` carries (`actions`, `accessRights`), for
 * `GET /api/auth/me`: a client reads them to know what to offer. Keyed by source key; `*` for what the built-in
 * groups give on every source. A summary for clients, not the decision: each route decides from source-access.ts.
 */

export interface SourceAccessRights {
  alerts: { read: string[] };
  nodes: { edit: string[]; write: string[] };
  edges: { edit: string[]; write: string[] };
}

export interface UserAccess {
  actions: Record<string, string[]>;
  accessRights: Record<string, SourceAccessRights>;
}

const everything = (edit: string[], write: string[]): SourceAccessRights => ({
  alerts: { read: [ANY_TARGET] },
  nodes: { edit, write },
  edges: { edit, write },
});

const rank = (level: string) => ITEM_LEVELS.indexOf(level as ItemLevel);

/** A custom group's right, or (target null) a custom group without the rights asked for. */
interface RightRow {
  source_key: string;
  target_type: string | null;
  target_name: string;
  type: string;
}

/** The access of a principal in these groups: the built-in groups' without a query, the custom groups' in one. */
export async function describeUserAccess(db: Queryable, groupIds: readonly number[]): Promise<UserAccess> {
  const access: UserAccess = { actions: {}, accessRights: {} };
  if (groupIds.includes(ADMIN_GROUP_ID)) {
    access.actions[ANY_TARGET] = [...ACTIONS, ...ADMIN_ACTIONS];
    access.accessRights[ANY_TARGET] = everything([ANY_TARGET], [ANY_TARGET]);
  } else if (groupIds.includes(ANALYST_GROUP_ID)) {
    access.actions[ANY_TARGET] = [...ANALYST_ACTIONS];
    access.accessRights[ANY_TARGET] = everything([], []);
  }
  // Admin and Analyst alone (most users, and every existing install's): nothing to ask.
  if (groupIds.every((id) => id === ADMIN_GROUP_ID || id === ANALYST_GROUP_ID)) return access;
  // A source one of the groups is on is listed even when the group has no rights there: the user sees the source.
  const { rows } = await db.query<RightRow>(
    `SELECT g.source_key, r.target_type, r.target_name, r.type
     FROM groups g LEFT JOIN group_access_rights r ON r.group_id = g.id AND r.target_type IN ('action', 'alert', 'nodeCategory', 'edgeType')
     WHERE g.id = ANY($1::int[]) AND g.source_key IS NOT NULL
     ORDER BY g.source_key, r.target_type, r.target_name COLLATE "C"`,
    [[...groupIds]],
  );
  const sets = new Map<string, { actions: Set<string>; alerts: Set<string>; nodes: [Set<string>, Set<string>]; edges: [Set<string>, Set<string>] }>();
  for (const row of rows) {
    let set = sets.get(row.source_key);
    if (!set) sets.set(row.source_key, (set = { actions: new Set(), alerts: new Set(), nodes: [new Set(), new Set()], edges: [new Set(), new Set()] }));
    if (row.target_type === 'action' && row.type === 'do') set.actions.add(row.target_name);
    else if (row.target_type === 'alert' && row.type === 'read') set.alerts.add(row.target_name);
    else if (row.target_type === 'nodeCategory' || row.target_type === 'edgeType') {
      const [edit, write] = row.target_type === 'nodeCategory' ? set.nodes : set.edges;
      if (rank(row.type) >= rank('edit')) edit.add(row.target_name);
      if (row.type === 'write') write.add(row.target_name);
    }
  }
  for (const [key, set] of sets) {
    access.actions[key] = ACTIONS.filter((action) => set.actions.has(action));
    access.accessRights[key] = {
      alerts: { read: [...set.alerts] },
      nodes: { edit: [...set.nodes[0]], write: [...set.nodes[1]] },
      edges: { edit: [...set.edges[0]], write: [...set.edges[1]] },
    };
  }
  return access;
}
