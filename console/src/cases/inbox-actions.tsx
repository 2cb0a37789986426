import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { SelectField } from '../components/field';
import { Notice } from '../components/notice';
import { useSession } from '../session';
import type { AssignableUser, BulkAction, BulkActionAnswer, InboxCase } from '../types';
import { useApi } from '../use-api';
import { alertApiPath, assignCases } from './assign';
import { OUTCOME_WORDS, STATUS_ACTIONS, STATUS_SET_BY } from './case-words';

const BULK_OPTIONS: { value: BulkAction; label: string }[] = [...STATUS_ACTIONS, { value: 'comment', label: 'Comment only' }];
const ME = 'me';
const NOBODY = 'nobody';

type Report = { kind: 'success' | 'error' | 'info'; title: string; lines?: string[] };

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * What the inbox does to the selected cases at once: one status change (each case its own caseStatusChange, as on
 * its page) or comment, with the outcome of each case; or an assignment. `onDone` reloads the list.
 */
export function InboxActions({ selected, onDone }: { selected: InboxCase[]; onDone: () => void }) {
  const { user } = useSession();
  const [action, setAction] = useState<BulkAction>('confirm');
  const [comment, setComment] = useState('');
  const [assignee, setAssignee] = useState(ME);
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<Report>();

  // Someone else than me or nobody: a user of the cases' alert, offered when they all have the same one.
  const alerts = new Set(selected.map((c) => `${c.sourceKey}/${c.alertId}`));
  const oneAlert = alerts.size === 1 ? selected[0] : undefined;
  const users = useApi<AssignableUser[]>(oneAlert ? `${alertApiPath(oneAlert.sourceKey, oneAlert.alertId)}/users` : null);
  const assignees = [
    { value: ME, label: `Me (${user.username})` },
    { value: NOBODY, label: 'Nobody (unassign)' },
    ...(oneAlert ? (users.data ?? []).filter((u) => u.id !== user.id).map((u) => ({ value: String(u.id), label: u.username })) : []),
  ];
  const count = selected.length;
  const none = count === 0;

  const run = async (work: () => Promise<Report>) => {
    setBusy(true);
    setReport(undefined);
    try {
      setReport(await work());
      onDone();
    } catch (err) {
      setReport({ kind: 'error', title: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const changeStatus = (e: Event) => {
    e.preventDefault();
    if (action === 'comment' && !comment.trim()) {
      setReport({ kind: 'error', title: 'Write the comment to add.' });
      return;
    }
    void run(async () => {
      const answer = await post<BulkActionAnswer>('/api/cases/action', { caseIds: selected.map((c) => c.id), action, ...(comment.trim() ? { comment } : {}) });
      setComment('');
      const done = answer.results.filter((r) => r.outcome === 'done').length;
      const what = action === 'comment' ? 'commented' : STATUS_SET_BY[action];
      return {
        kind: done === answer.results.length ? 'success' : 'info',
        title: `${plural(done, 'case')} of ${answer.results.length} ${what}.`,
        lines: answer.results.map((r) => `Case ${r.caseId}: ${OUTCOME_WORDS[r.outcome]}`),
      };
    });
  };

  const assign = (e: Event) => {
    e.preventDefault();
    const userId = assignee === ME ? user.id : assignee === NOBODY ? null : Number(assignee);
    const name = assignee === ME ? 'you' : (assignees.find((a) => a.value === assignee)?.label ?? assignee);
    void run(async () => {
      await assignCases(selected, userId);
      return { kind: 'success', title: userId === null ? `${plural(count, 'case')} unassigned.` : `${plural(count, 'case')} assigned to ${name}.` };
    });
  };

  return (
    <section aria-labelledby="selected-cases" class="bulk">
      <h3 id="selected-cases">{none ? 'No case selected' : `${plural(count, 'case')} selected`}</h3>
      <div class="bulk-forms">
        <form onSubmit={changeStatus} aria-label="Change the selected cases' status">
          <div class="form-row">
            <SelectField label="Action" value={action} options={BULK_OPTIONS} onChange={(e) => setAction(e.currentTarget.value as BulkAction)} />
            <div class="field grow">
              <label for="bulk-comment">{action === 'comment' ? 'Comment' : 'Comment (optional)'}</label>
              <input id="bulk-comment" maxLength={4000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
            </div>
            <button type="submit" class="field-aligned" disabled={none || busy}>
              {none ? 'Apply' : `Apply to ${plural(count, 'case')}`}
            </button>
          </div>
        </form>
        <form onSubmit={assign} aria-label="Assign the selected cases">
          <div class="form-row">
            <SelectField label="Assign to" value={assignee} options={assignees} onChange={(e) => setAssignee(e.currentTarget.value)} />
            <button type="submit" class="field-aligned" disabled={none || busy}>
              {none ? 'Assign' : `Assign ${plural(count, 'case')}`}
            </button>
          </div>
          {count > 0 && !oneAlert ? <p class="hint">Select cases of one alert to assign them to someone else than you.</p> : null}
        </form>
      </div>
      {report ? (
        <Notice kind={report.kind}>
          <p>{report.title}</p>
          {report.lines ? (
            <ul class="outcomes">
              {report.lines.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
        </Notice>
      ) : null}
    </section>
  );
}
