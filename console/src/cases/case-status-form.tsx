import { useState } from 'preact/hooks';
import { messageOf, post } from '../api';
import { SelectField } from '../components/field';
import { Notice } from '../components/notice';
import { STATUS_ACTIONS, STATUS_SET_BY } from './case-words';

/**
 * The case's comment box and its status change (POST …/action): a comment alone is recorded in the action log; with a
 * status change it goes in the log and in the caseStatusChange payload sent to the subscribed webhooks.
 * `base`: the case's API path.
 */
export function CaseStatusForm({ base, onChanged }: { base: string; onChanged: () => void }) {
  const [action, setAction] = useState<(typeof STATUS_ACTIONS)[number]['value']>('confirm');
  const [comment, setComment] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);

  const send = async (body: { action: string; comment?: string }, done: string) => {
    setBusy(true);
    setOutcome(undefined);
    try {
      await post(`${base}/action`, body);
      setOutcome({ ok: true, text: done });
      setComment('');
      onChanged();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  const changeStatus = (e: Event) => {
    e.preventDefault();
    void send(comment.trim() ? { action, comment } : { action }, `Status changed to ${STATUS_SET_BY[action]}.`);
  };
  const addComment = () => {
    if (!comment.trim()) setOutcome({ ok: false, text: 'Write the comment first.' });
    else void send({ action: 'comment', comment }, 'Comment added.');
  };

  return (
    // Not named by its heading: the heading says "Comment", and the comment box alone should answer to that label.
    <form class="card" onSubmit={changeStatus}>
      <h2>Comment or change the status</h2>
      <div class="field">
        <label for="case-comment">Comment</label>
        <textarea id="case-comment" rows={3} maxLength={4000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} aria-describedby="case-comment-hint" />
        <p class="hint" id="case-comment-hint">
          Saved in the action log; with a status change, also sent in its webhook payload.
        </p>
      </div>
      <p class="inline-action">
        <button type="button" class="secondary" disabled={busy} onClick={addComment}>
          Add comment
        </button>
        <span class="muted">leaves the status as it is</span>
      </p>
      <div class="status-row">
        <SelectField label="Action" options={STATUS_ACTIONS} value={action} onChange={(e) => setAction(e.currentTarget.value as typeof action)} />
        <button type="submit" disabled={busy}>
          Apply
        </button>
      </div>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
    </form>
  );
}
