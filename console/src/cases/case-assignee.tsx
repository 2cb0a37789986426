import { useState } from 'preact/hooks';
import { messageOf } from '../api';
import { SelectField } from '../components/field';
import { Notice } from '../components/notice';
import { useSession } from '../session';
import type { AssignableUser, PopulatedCase } from '../types';
import { useApi } from '../use-api';
import { alertApiPath, assignCases } from './assign';

/**
 * Who the case is assigned to, with "Assign to me", "Unassign" and any user of the alert (GET …/alerts/:id/users:
 * the users who may read it). Each change is an `assign` entry in the action log; `onChanged` reloads the case.
 */
export function CaseAssignee({ kase, onChanged }: { kase: PopulatedCase; onChanged: () => void }) {
  const { user } = useSession();
  const users = useApi<AssignableUser[]>(`${alertApiPath(kase.sourceKey, kase.alertId)}/users`);
  const [chosen, setChosen] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const assigned = kase.assignedUser;

  const assign = async (userId: number | null) => {
    setBusy(true);
    setError(undefined);
    try {
      await assignCases([kase], userId);
      setChosen('');
      onChanged();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const others = (users.data ?? []).filter((u) => u.id !== user.id && u.id !== assigned?.id);

  return (
    <div class="assignee">
      <p>
        Assigned to{' '}
        <strong>{assigned ? (assigned.id === user.id ? `you (${assigned.username})` : assigned.username) : 'nobody'}</strong>
      </p>
      <div class="inline-action">
        {assigned?.id === user.id ? null : (
          <button type="button" class="secondary" disabled={busy} onClick={() => void assign(user.id)}>
            Assign to me
          </button>
        )}
        {assigned ? (
          <button type="button" class="secondary" disabled={busy} onClick={() => void assign(null)}>
            Unassign
          </button>
        ) : null}
      </div>
      {others.length > 0 ? (
        <form
          class="form-row"
          aria-label="Assign to a user"
          onSubmit={(e) => {
            e.preventDefault();
            if (chosen) void assign(Number(chosen));
          }}
        >
          <SelectField
            label="Assign to"
            value={chosen}
            options={[{ value: '', label: 'Choose a user…' }, ...others.map((u) => ({ value: String(u.id), label: u.hasAssignedCases ? `${u.username} (has cases)` : u.username }))]}
            onChange={(e) => setChosen(e.currentTarget.value)}
          />
          <button type="submit" class="secondary field-aligned" disabled={busy || !chosen}>
            Assign
          </button>
        </form>
      ) : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
    </div>
  );
}
