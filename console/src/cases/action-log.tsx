import { formatTime } from '../format';
import type { CaseAction } from '../types';
import { describeAction } from './case-words';

/** The case's action log, oldest first as the API answers it: status changes, comments and assignments, by whom and when. */
export function ActionLog({ actions }: { actions: CaseAction[] }) {
  return (
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
                  {describeAction(a)} <code class="muted">{a.action}</code>
                </td>
                <td class="comment">{a.comment || <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
