import { messageOf, post } from '../api';
import type { InboxCase } from '../types';

type CaseRef = Pick<InboxCase, 'id' | 'sourceKey' | 'alertId'>;

export const alertApiPath = (sourceKey: string, alertId: number | string) => `/api/${encodeURIComponent(sourceKey)}/alerts/${alertId}`;

/**
 * Assigns `cases` to the user (null: unassigns them), through LKE's bulkAssignCases (POST /api/:sourceKey/alerts/cases/
 * assignments): one call, all or nothing, per data source; a selection across sources is one call per source.
 */
export async function assignCases(cases: readonly CaseRef[], userId: number | null): Promise<void> {
  const bySource = new Map<string, Map<number, number[]>>();
  for (const c of cases) {
    const alerts = bySource.get(c.sourceKey) ?? new Map<number, number[]>();
    alerts.set(c.alertId, [...(alerts.get(c.alertId) ?? []), c.id]);
    bySource.set(c.sourceKey, alerts);
  }
  for (const [sourceKey, alerts] of bySource) {
    const casesPerAlert = [...alerts].map(([alertId, caseIds]) => ({ alertId, caseIds }));
    try {
      await post(`/api/${encodeURIComponent(sourceKey)}/alerts/cases/assignments`, { casesPerAlert, assignedUserId: userId });
    } catch (err) {
      // The sources before this one are done: say which cases were not.
      if (bySource.size === 1) throw err;
      const ids = casesPerAlert.flatMap((a) => a.caseIds);
      throw new Error(`case${ids.length === 1 ? '' : 's'} ${ids.join(', ')} (${sourceKey}): ${messageOf(err)}`, { cause: err });
    }
  }
}
