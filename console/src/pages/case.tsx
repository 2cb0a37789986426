import { useState } from 'preact/hooks';
import { ApiError, get, messageOf, post } from '../api';
import { SelectField } from '../components/field';
import { Notice, StatusBadge } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import type { Alert, CaseAction, DataSource, PopulatedCase } from '../types';
import { useLoad } from '../use-api';
import { alertPath } from '../alerts/alert-words';
import { Link } from '../components/link';
import { useSession } from '../session';
import { CaseMatches } from '../cases/case-matches';
import { CaseTarget } from '../cases/case-target';

/** The status each action sets. */
const SETS: Record<string, string> = { confirm: 'confirmed', dismiss: 'dismissed', 'in-progress': 'in-progress', unconfirm: 'unconfirmed' };

const ACTIONS = [
  { value: 'confirm', label: 'Confirm' },
  { value: 'dismiss', label: 'Dismiss' },
  { value: 'in-progress', label: 'In progress' },
  { value: 'unconfirm', label: 'Unconfirm' },
  { value: 'comment', label: 'Comment only (status unchanged)' },
];

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
        </section>
      </div>
      <CaseTarget kase={caseItem} base={`/api/${encodeURIComponent(source.key)}/alerts/${alert.id}/cases/${caseItem.id}`} />
      <div class="columns">
        <CaseMatches alert={alert} caseId={caseItem.id} />
        <ChangeStatus base={`/api/${encodeURIComponent(source.key)}/alerts/${alert.id}/cases/${caseItem.id}`} onChanged={reload} />
      </div>
      <section aria-labelledby="action-log" class="card">
        <h2 id="action-log">Action log</h2>
        {actions.length === 0 ? (
          <p class="muted">No action yet.</p>
        ) : (
          <table class="data" aria-labelledby="action-log">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">User</th>
                <th scope="col">Action</th>
                <th scope="col">Comment</th>
              </tr>
            </thead>
            <tbody>
              {actions.map((a) => (
                <tr key={a.id}>
                  <td>{formatTime(a.createdAt)}</td>
                  <td>
                    {a.user?.username ?? 'a deleted user'}
                    {a.application ? <span class="muted"> (API key {a.application.name})</span> : null}
                  </td>
                  <td>
                    <code>{a.action}</code>
                  </td>
                  <td>{a.comment || <span class="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

/** POST …/action: a status change emits caseStatusChange to the subscribed webhooks, as through the API. */
function ChangeStatus({ base, onChanged }: { base: string; onChanged: () => void }) {
  const [action, setAction] = useState('confirm');
  const [comment, setComment] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setOutcome(undefined);
    try {
      await post(`${base}/action`, comment ? { action, comment } : { action });
      setOutcome({ ok: true, text: action === 'comment' ? 'Comment added.' : `Status changed to ${SETS[action]}.` });
      setComment('');
      onChanged();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" aria-labelledby="change-status" onSubmit={(e) => void submit(e)}>
      <h2 id="change-status">Change the status</h2>
      <div class="form-row">
        <SelectField label="Action" options={ACTIONS} value={action} onChange={(e) => setAction(e.currentTarget.value)} />
        <div class="field grow">
          <label for="case-comment">Comment</label>
          <textarea id="case-comment" rows={2} maxLength={4000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
        </div>
      </div>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
      <button type="submit" disabled={busy}>
        Apply
      </button>
    </form>
  );
}
