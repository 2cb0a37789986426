import { ADMIN_GROUP_ID, ANALYST_GROUP_ID } from '../auth/groups.js';
import type { Principal } from '../auth/principal.js';
import type { Queryable } from '../db/database.js';
import { ANY_TARGET } from './access-rights.js';
import { builtinAccess, loadSourceAccess, visibleSourceKeys } from './source-access.js';

/**
 * Which alerts one principal may read, across every data source: what the case inbox lists, and what its bulk actions
 * and assignments may touch. Admin and the built-in Analyst: every alert ('all'). A custom group's member: on each
 * source their groups are on, the alerts those groups' alert rights grant (src/access/source-access.ts decides, per
 * source, as it does for the routes under /api/:sourceKey/), as the alerts that exist now.
 */
export type AlertScope = 'all' | ReadonlySet<number>;

export async function loadAlertScope(db: Queryable, principal: Principal): Promise<AlertScope> {
  if (builtinAccess(principal, '')) return 'all';
  const sources = await visibleSourceKeys(db, principal);
  if (sources === 'all') return 'all';
  const readable = new Set<number>();
  for (const sourceKey of sources) {
    const access = await loadSourceAccess(db, principal, sourceKey);
    if (!access) continue;
    // An alert right may name an alert that was deleted, or one of another source: only this source's alerts count.
    const { rows } = await db.query<{ id: number }>('SELECT id FROM alerts WHERE source_key = $1 AND ($2::int[] IS NULL OR id = ANY($2::int[]))', [
      sourceKey,
      access.alerts === 'all' ? null : [...access.alerts],
    ]);
    for (const row of rows) readable.add(row.id);
  }
  return readable;
}

export const scopeReads = (scope: AlertScope, alertId: number): boolean => scope === 'all' || scope.has(alertId);

/**
 * The users who may read one alert: members of Admin or Analyst, and members of a custom group of the alert's source
 * whose alert rights grant it (`*` or its id, `read`). The same rule as source-access.ts's, asked the other way round
 * (who, rather than what): a user's own groups, not those of an API key they made. `onlyUserId` asks about one user.
 */
export async function alertReaders(
  db: Queryable,
  alert: { sourceKey: string; alertId: number },
  onlyUserId?: number,
): Promise<{ id: number; username: string; email: string; has_assigned_cases: boolean }[]> {
  const { rows } = await db.query<{ id: number; username: string; email: string; has_assigned_cases: boolean }>(
    `SELECT u.id, u.username, u.email,
            EXISTS (SELECT 1 FROM cases c WHERE c.assigned_user_id = u.id AND c.alert_id = $2) AS has_assigned_cases
     FROM users u
     WHERE ($4::int IS NULL OR u.id = $4)
       AND EXISTS (
         SELECT 1 FROM user_groups ug
         WHERE ug.user_id = u.id
           AND (ug.group_id = ANY($5::int[])
                OR EXISTS (SELECT 1 FROM groups g JOIN group_access_rights r ON r.group_id = g.id
                           WHERE g.id = ug.group_id AND g.source_key = $1
                             AND r.target_type = 'alert' AND r.type = 'read' AND r.target_name IN ($3, $2::text))))
     ORDER BY lower(u.username), u.id`,
    [alert.sourceKey, alert.alertId, ANY_TARGET, onlyUserId ?? null, [ADMIN_GROUP_ID, ANALYST_GROUP_ID]],
  );
  return rows;
}
