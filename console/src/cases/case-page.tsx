import { ApiError, get } from '../api';
import { alertPath } from '../alerts/alert-words';
import { Link } from '../components/link';
import { Notice, StatusBadge } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { useSession } from '../session';
import type { Alert, CaseAction, DataSource, PopulatedCase } from '../types';
import { useLoad } from '../use-api';
import { ActionLog } from './action-log';
import { CaseAssignee } from './case-assignee';
import { CaseMatches } from './case-matches';
import { CaseStatusForm } from './case-status-form';
import { CaseTarget } from './case-target';

interface Loaded {
  source: DataSource;
  alert: Alert;
  caseItem: PopulatedCase;
  actions: CaseAction[];
}

/**
 * The link in every payload, `/alerts/:alertId/case/:caseId`, names no data source, which the API needs: the
 * source is found by asking each one for the alert (a direct lookup route would spare the calls).
 */
async function findAlert(alertId: string, signal: AbortSignal): Promise<{ source: DataSource; alert: Alert } | undefined> {
  const sources = await get<DataSource[]>('/api/dataSources', signal);
  const found = await Promise.all(
    sources.map((source) =>
      get<Alert>(`/api/${encodeURIComponent(source.key)}/alerts/${alertId}`, signal).then(
        (alert) => ({ source, alert }),
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return undefined;
          throw err;
        },
      ),
    ),
  );
  return found.find((f) => f !== undefined);
}

export function CasePage({ alertId, caseId }: { alertId: string; caseId: string }) {
  const { admin } = useSession();
  const { data: loaded, error, reload } = useLoad<Loaded | null>(
    async (signal) => {
      if (!/^[1-9]\d{0,15}$/.test(alertId) || !/^[1-9]\d{0,15}$/.test(caseId)) return null;
      const found = await findAlert(alertId, signal);
      if (!found) return null;
      const base = `/api/${encodeURIComponent(found.source.key)}/alerts/${alertId}/cases/${caseId}`;
      try {
        const [caseItem, actions] = await Promise.all([get<PopulatedCase>(base, signal), get<{ items: CaseAction[] }>(`${base}/actions`, signal)]);
        return { ...found, caseItem, actions: actions.items };
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
    [alertId, caseId],
  );

  if (error) return <Notice kind="error">{error.message}</Notice>;
  if (loaded === undefined) return <p class="loading">Loading the case…</p>;
  if (loaded === null) {
    return (
      <section>
        <PageTitle title="Case not found">Case not found</PageTitle>
        <p>
          No data source has a case {caseId} of alert {alertId}.
        </p>
      </section>
    );
  }

  const { source, alert, caseItem, actions } = loaded;
  const base = `/api/${encodeURIComponent(source.key)}/alerts/${alert.id}/cases/${caseItem.id}`;
  return (
    <>
      <p class="crumbs">
        {source.name} / alert {alert.id} / case {caseItem.id}
      </p>
      <PageTitle title={`Case ${caseItem.id}`}>
        Case {caseItem.id} <StatusBadge status={caseItem.status} />
      </PageTitle>
      <div class="columns">
        <section aria-labelledby="alert" class="card">
          <h2 id="alert">Alert: {alert.title}</h2>
          {alert.description ? <p>{alert.description}</p> : <p class="muted">No description.</p>}
          <dl class="facts">
            <dt>Data source</dt>
            <dd>
              {source.name} <code>{source.key}</code>
            </dd>
            <dt>Alert</dt>
            <dd>
              {admin ? <Link href={alertPath(source.key, alert.id)}>#{alert.id}</Link> : `#${alert.id}`} {alert.enabled ? '' : '(disabled)'}
            </dd>
          </dl>
        </section>
        <section aria-labelledby="case-facts" class="card">
          <h2 id="case-facts">Case</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={caseItem.status} />
              {caseItem.statusUpdateDate ? ` since ${formatTime(caseItem.statusUpdateDate)}` : ''}
              {caseItem.user ? ` by ${caseItem.user.username}` : ''}
            </dd>
            <dt>Matches</dt>
            <dd>{caseItem.matchCount}</dd>
            <dt>Created</dt>
            <dd>{formatTime(caseItem.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{formatTime(caseItem.updatedAt)}</dd>
          </dl>
          <CaseAssignee kase={caseItem} onChanged={reload} />
        </section>
      </div>
      <CaseTarget kase={caseItem} base={base} />
      <div class="columns">
        <CaseMatches alert={alert} caseId={caseItem.id} />
        <CaseStatusForm base={base} onChanged={reload} />
      </div>
      <ActionLog actions={actions} />
    </>
  );
}
