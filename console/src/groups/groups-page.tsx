import { useEffect, useState } from 'preact/hooks';
import { del, messageOf, patch, post } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { Field, SelectField } from '../components/field';
import { Link } from '../components/link';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { navigate } from '../router';
import type { DataSource, SourceGroup } from '../types';
import { useApi } from '../use-api';
import { describeRights } from './group-words';
import { groupPath, groupsApiPath, groupsPath } from './group-paths';
import { PropertyKeySetting } from './property-key-setting';

/** `/groups`: the groups of the first data source (the page has a picker for the others). */
export function GroupsIndex() {
  const { data: sources, error } = useApi<DataSource[]>('/api/dataSources');
  const first = sources?.[0]?.key;
  useEffect(() => {
    if (first) navigate(groupsPath(first), { replace: true });
  }, [first]);
  if (error) return <Notice kind="error">{error.message}</Notice>;
  if (!sources || first) return <p class="loading">Loading…</p>;
  return (
    <section>
      <PageTitle title="Groups">Groups</PageTitle>
      <p>Groups belong to a data source, and there is none yet: create one first.</p>
    </section>
  );
}

/**
 * A data source's groups (GET /api/admin/:sourceKey/groups): the built-in Admin and Analyst, which reach every source,
 * and the custom groups of this one, each with its members and rights; create, rename, delete, and a link to each
 * custom group's access rights.
 */
export function GroupsPage({ sourceKey }: { sourceKey: string }) {
  const sources = useApi<DataSource[]>('/api/dataSources');
  const groups = useApi<SourceGroup[]>(groupsApiPath(sourceKey));
  const source = sources.data?.find((s) => s.key === sourceKey);
  const [deleting, setDeleting] = useState<SourceGroup>();
  const [renaming, setRenaming] = useState<number>();
  const [problem, setProblem] = useState<string>();
  const name = source?.name ?? sourceKey;

  const remove = async (group: SourceGroup) => {
    try {
      await del(`${groupsApiPath(sourceKey)}/${group.id}`);
      setProblem(undefined);
      groups.reload();
    } catch (err) {
      setProblem(messageOf(err));
    }
    setDeleting(undefined);
  };

  return (
    <>
      <PageTitle title={`Groups of ${name}`}>Groups</PageTitle>
      <div class="section-head">
        <SelectField
          label="Data source"
          value={sourceKey}
          options={(sources.data ?? [{ key: sourceKey, name: sourceKey }]).map((s) => ({ value: s.key, label: `${s.name} (${s.key})` }))}
          onChange={(e) => navigate(groupsPath(e.currentTarget.value))}
        />
      </div>
      {groups.error ?? sources.error ? <Notice kind="error">{(groups.error ?? sources.error)!.message}</Notice> : null}
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <section aria-labelledby="groups-list" class="card">
        <h2 id="groups-list">Groups of {name}</h2>
        <p class="muted">
          Admin and Analyst are built in: they reach every data source. A custom group belongs to this one, and its members see of it what its access rights
          give them, nothing more.
        </p>
        {groups.data === undefined ? (
          groups.error ? null : <p class="loading">Loading…</p>
        ) : (
          <table class="data" aria-labelledby="groups-list">
            <thead>
              <tr>
                <th scope="col">Group</th>
                <th scope="col">Members</th>
                <th scope="col">Access rights</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="offscreen">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.data.map((group) => (
                <tr key={group.id}>
                  <td>
                    {renaming === group.id ? (
                      <RenameForm
                        group={group}
                        onDone={() => {
                          setRenaming(undefined);
                          groups.reload();
                        }}
                      />
                    ) : group.builtin ? (
                      <span class="nowrap">
                        {group.name} <span class="badge badge-unconfirmed">built-in</span>
                      </span>
                    ) : (
                      <Link href={groupPath(sourceKey, group.id)}>{group.name}</Link>
                    )}
                  </td>
                  <td class="num">{group.userCount}</td>
                  <td>{group.builtin ? <span class="muted">{group.id === 1 ? 'everything, on every data source' : 'reads everything, on every data source'}</span> : describeRights(group.accessRights)}</td>
                  <td>{group.builtin ? '—' : formatTime(group.updatedAt)}</td>
                  <td>
                    {group.builtin || renaming === group.id ? null : (
                      <div class="row-actions">
                        <Link href={groupPath(sourceKey, group.id)} class="button small">
                          Edit rights
                        </Link>
                        <button type="button" class="secondary small" aria-label={`Rename group ${group.name}`} onClick={() => setRenaming(group.id)}>
                          Rename
                        </button>
                        <button type="button" class="danger small" aria-label={`Delete group ${group.name}`} onClick={() => setDeleting(group)}>
                          Delete
                        </button>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <NewGroupForm sourceKey={sourceKey} />
      </section>
      <PropertyKeySetting sourceKey={sourceKey} sourceName={name} />
      {deleting ? (
        <ConfirmDialog title={`Delete the group ${deleting.name}?`} confirmLabel="Delete group" onConfirm={() => void remove(deleting)} onCancel={() => setDeleting(undefined)}>
          <p>
            Its {deleting.userCount} member{deleting.userCount === 1 ? '' : 's'} lose{deleting.userCount === 1 ? 's' : ''} what it gives them on {name}; their other groups
            stay.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function NewGroupForm({ sourceKey }: { sourceKey: string }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const group = await post<SourceGroup>(groupsApiPath(sourceKey), { name });
      // A new group gives nothing yet: its rights are the next thing to set.
      navigate(groupPath(sourceKey, group.id));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-group">
      <h3 id="new-group">New group</h3>
      <div class="form-row">
        <Field label="Group name" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} error={error} />
        <button type="submit" class="field-aligned">
          Create group
        </button>
      </div>
    </form>
  );
}

function RenameForm({ group, onDone }: { group: SourceGroup; onDone: () => void }) {
  const [name, setName] = useState(group.name);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await patch(`${groupsApiPath(group.sourceKey)}/${group.id}`, { name });
      onDone();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <form class="inline-action" onSubmit={(e) => void submit(e)} noValidate aria-label={`Rename group ${group.name}`}>
      <Field label={`New name of ${group.name}`} autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} error={error} />
      <button type="submit" class="small">
        Save
      </button>
      <button type="button" class="secondary small" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}
