import { useState } from 'preact/hooks';
import { ApiError, del, get, messageOf, patch, post } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { lazyComponent } from '../components/lazy';
import { Link } from '../components/link';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { navigate } from '../router';
import type { Alert } from '../types';
import { useApi } from '../use-api';
import { AlertCases } from './alert-cases';
import { AlertRuns } from './alert-runs';
import { alertPath, describeRunCounts } from './alert-words';

// The form holds CodeMirror: fetched with the first alert form opened, not with the console.
const AlertForm = lazyComponent(() => import('./alert-form').then((m) => m.AlertForm), 'alert editor');

export type AlertTab = 'definition' | 'runs' | 'cases';
const TABS: { tab: AlertTab; label: string; path: string }[] = [
  { tab: 'definition', label: 'Definition', path: '' },
  { tab: 'runs', label: 'Runs', path: 'runs' },
  { tab: 'cases', label: 'Cases', path: 'cases' },
];

/** `/sources/:sourceKey/alerts/new`: the form, empty. */
export function NewAlertPage({ sourceKey }: { sourceKey: string }) {
  return (
    <>
      <p class="crumbs">
        <Link href={alertPath(sourceKey)}>Alerts of {sourceKey}</Link> / new
      </p>
      <PageTitle title="New alert">New alert</PageTitle>
      <AlertForm sourceKey={sourceKey} onSaved={(saved) => navigate(alertPath(sourceKey, saved.id), { replace: true })} />
    </>
  );
}

/** One alert: its definition (edit, preview), run now, enable or disable, delete; its runs; its cases. */
export function AlertPage({ sourceKey, alertId, tab }: { sourceKey: string; alertId: string; tab: AlertTab }) {
  const loaded = useApi<Alert>(`/api/${encodeURIComponent(sourceKey)}/alerts/${encodeURIComponent(alertId)}`, { refreshMs: tab === 'definition' ? undefined : 10_000 });
  const { data: alert, error } = loaded;
  const notFound = error instanceof ApiError && (error.status === 404 || error.status === 400);
  if (notFound) {
    return (
      <section>
        <PageTitle title="Alert not found">Alert not found</PageTitle>
        <p>
          Data source {sourceKey} has no alert {alertId}. <Link href={alertPath(sourceKey)}>Back to its alerts</Link>
        </p>
      </section>
    );
  }
  if (!alert) return error ? <Notice kind="error">{error.message}</Notice> : <p class="loading">Loading…</p>;

  return (
    <>
      <p class="crumbs">
        <Link href={alertPath(sourceKey)}>Alerts of {sourceKey}</Link> / #{alert.id}
      </p>
      <PageTitle title={alert.title}>
        {alert.title} {alert.enabled ? <span class="badge badge-sent">Enabled</span> : <span class="badge badge-unconfirmed">Disabled</span>}
      </PageTitle>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      <AlertActions alert={alert} onChanged={loaded.setData} onRun={loaded.reload} />
      <nav class="tabs" aria-label="Alert">
        {TABS.map((t) => (
          <Link key={t.tab} href={alertPath(sourceKey, alert.id, t.path)} aria-current={t.tab === tab ? 'page' : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
      {tab === 'definition' ? <AlertForm key={alert.id} sourceKey={sourceKey} alert={alert} onSaved={loaded.setData} /> : null}
      {tab === 'runs' ? <AlertRuns alert={alert} /> : null}
      {tab === 'cases' ? <AlertCases alert={alert} /> : null}
    </>
  );
}

/** Run now (waits for the run and says what it found), enable or disable, delete after a confirmation. */
function AlertActions({ alert, onChanged, onRun }: { alert: Alert; onChanged: (alert: Alert) => void; onRun: () => void }) {
  const base = `/api/admin/${encodeURIComponent(alert.sourceKey)}/alerts/${alert.id}`;
  const [busy, setBusy] = useState<'run' | 'toggle' | 'delete'>();
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [confirming, setConfirming] = useState(false);

  const act = async (what: 'run' | 'toggle' | 'delete', call: () => Promise<void>) => {
    setBusy(what);
    setOutcome(undefined);
    try {
      await call();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(undefined);
    }
  };
  const runNow = () =>
    act('run', async () => {
      const { alreadyRunning } = await post<{ alreadyRunning: boolean }>(`${base}/run`, { waitForRun: true });
      const after = await get<Alert>(`/api/${encodeURIComponent(alert.sourceKey)}/alerts/${alert.id}`);
      onChanged(after);
      onRun();
      const run = after.runs[0];
      setOutcome(
        alreadyRunning
          ? { ok: true, text: 'A run was already under way: its outcome is in Runs.' }
          : run
            ? { ok: run.outcome !== 'failed', text: `Run ${run.outcome}: ${describeRunCounts(run)}, ${run.casesOpened} new case${run.casesOpened === 1 ? '' : 's'}.` }
            : { ok: true, text: 'Run done.' },
      );
    });
  const toggle = () => act('toggle', async () => onChanged(await patch<Alert>(base, { enabled: !alert.enabled })));
  const remove = () =>
    act('delete', async () => {
      await del(base);
      navigate(alertPath(alert.sourceKey));
    });

  return (
    <section aria-label="Alert actions" class="card actions-card">
      <div class="actions">
        <button type="button" disabled={busy !== undefined || alert.queries.length === 0} onClick={() => void runNow()}>
          {busy === 'run' ? 'Running…' : 'Run now'}
        </button>
        <button type="button" class="secondary" disabled={busy !== undefined} onClick={() => void toggle()}>
          {alert.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="danger" disabled={busy !== undefined} onClick={() => setConfirming(true)}>
          Delete alert
        </button>
      </div>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
      {confirming ? (
        <ConfirmDialog
          title="Delete this alert?"
          confirmLabel="Delete alert and its cases"
          busy={busy === 'delete'}
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            The alert <strong>{alert.title}</strong> stops running, and its cases and their history go with it. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
