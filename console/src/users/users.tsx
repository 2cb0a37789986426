import { useState } from 'preact/hooks';
import { del, fieldOf, messageOf, patch, post } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CopyButton } from '../components/copy-button';
import { Field, SelectField } from '../components/field';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import { groupLabel, useGroupChoices, type GroupChoice } from '../groups/all-groups';
import { useSession } from '../session';
import { GROUPS, type Application, type Group, type User } from '../types';
import { useApi } from '../use-api';

const GROUP_OPTIONS = [...GROUPS].reverse().map((g) => ({ value: String(g.id), label: g.name }));
/** A member's groups, a custom one named with its data source. */
const memberGroups = (groups: Group[], choices: GroupChoice[] | undefined) => groups.map((g) => choices?.find((c) => c.id === g.id)?.label ?? groupLabel(g)).join(', ');
/** The new user's group: Analyst first, then Admin, then the custom groups of every data source. */
const groupOptions = (choices: GroupChoice[] | undefined) => [...GROUP_OPTIONS, ...(choices ?? []).filter((c) => !c.builtin).map((c) => ({ value: String(c.id), label: c.label }))];

export function UsersPage() {
  return (
    <>
      <PageTitle title="Users and API keys">Users and API keys</PageTitle>
      <Users />
      <ApiKeys />
    </>
  );
}

const USER_FIELDS = ['username', 'email', 'password', 'groups'] as const;

function Users() {
  const list = useApi<{ items: User[] }>('/api/admin/users');
  const users = list.data?.items;
  const choices = useGroupChoices();
  const [editing, setEditing] = useState<number>();
  const [form, setForm] = useState({ username: '', email: '', password: '', group: '2' });
  const [errors, setErrors] = useState<Partial<Record<(typeof USER_FIELDS)[number] | 'form', string>>>({});
  const [created, setCreated] = useState<string>();


  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setCreated(undefined);
    try {
      const user = await post<User>('/api/admin/users', { username: form.username, email: form.email, password: form.password, groups: [Number(form.group)] });
      setCreated(`User ${user.username} created.`);
      setForm({ username: '', email: '', password: '', group: '2' });
      list.reload();
    } catch (err) {
      const message = messageOf(err);
      setErrors({ [fieldOf(err, USER_FIELDS) ?? 'form']: message });
    }
  };
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value });

  return (
    <section aria-labelledby="users" class="card">
      <h2 id="users">Users</h2>
      {list.error ? <Notice kind="error">{list.error.message}</Notice> : null}
      {users ? (
        <table class="data" aria-labelledby="users">
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Email</th>
              <th scope="col">Groups</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>{u.username}</td>
                <td>{u.email}</td>
                <td>
                  {editing === u.id && choices.data ? (
                    <MemberGroupsForm
                      user={u}
                      choices={choices.data}
                      onDone={(changed) => {
                        setEditing(undefined);
                        if (changed) list.reload();
                      }}
                    />
                  ) : (
                    <div class="inline-action">
                      <span>{memberGroups(u.groups, choices.data)}</span>
                      <button type="button" class="secondary small" aria-label={`Change the groups of ${u.username}`} disabled={!choices.data} onClick={() => setEditing(u.id)}>
                        Change
                      </button>
                    </div>
                  )}
                </td>
                <td>{formatTime(u.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="loading">Loading…</p>
      )}
      <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-user">
        <h3 id="new-user">New user</h3>
        <div class="form-row">
          <Field label="Username" autoComplete="off" value={form.username} onInput={set('username')} error={errors.username} />
          <Field label="Email" type="email" autoComplete="off" value={form.email} onInput={set('email')} error={errors.email} />
          <Field label="Password" type="password" autoComplete="new-password" value={form.password} onInput={set('password')} error={errors.password} hint="8 characters or more" />
          <SelectField label="Group" options={groupOptions(choices.data)} value={form.group} onChange={set('group')} error={errors.groups} />
        </div>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        {created ? <Notice kind="success">{created}</Notice> : null}
        <button type="submit">Create user</button>
      </form>
    </section>
  );
}

/**
 * A user's groups as checkboxes (PATCH /api/admin/users/:id, `groups`): the built-in ones and each data source's
 * custom groups; at least one.
 */
function MemberGroupsForm({ user, choices, onDone }: { user: User; choices: GroupChoice[]; onDone: (changed: boolean) => void }) {
  const [chosen, setChosen] = useState<ReadonlySet<number>>(() => new Set(user.groups.map((g) => g.id)));
  const [error, setError] = useState<string>();
  const toggle = (id: number) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChosen(next);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await patch(`/api/admin/users/${user.id}`, { groups: [...chosen] });
      onDone(true);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <form onSubmit={(e) => void save(e)} noValidate aria-label={`Groups of ${user.username}`}>
      <fieldset class="rights">
        <legend>Groups of {user.username}</legend>
        <ul class="check-list">
          {choices.map((c) => (
            <li key={c.id}>
              <label class="check">
                <input type="checkbox" checked={chosen.has(c.id)} onChange={() => toggle(c.id)} /> {c.label}
              </label>
            </li>
          ))}
        </ul>
      </fieldset>
      {error ? <p class="field-error">{error}</p> : null}
      <div class="inline-action">
        <button type="submit" class="small" disabled={chosen.size === 0}>
          Save groups
        </button>
        <button type="button" class="secondary small" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ApiKeys() {
  const { user } = useSession();
  const choices = useGroupChoices();
  const list = useApi<Application[]>('/api/admin/applications');
  const keys = list.data;
  const [removeError, setRemoveError] = useState<string>();
  const error = removeError ?? list.error?.message;
  const [name, setName] = useState('');
  const [group, setGroup] = useState('2');
  const [nameError, setNameError] = useState<string>();
  const [created, setCreated] = useState<Application>();
  const [deleting, setDeleting] = useState<Application>();


  const submit = async (e: Event) => {
    e.preventDefault();
    setNameError(undefined);
    setCreated(undefined);
    try {
      setCreated(await post<Application>('/api/admin/applications', { name, groups: [Number(group)] }));
      setName('');
      list.reload();
    } catch (err) {
      setNameError(messageOf(err));
    }
  };
  const remove = async (key: Application) => {
    try {
      await del(`/api/admin/applications/${key.id}`);
      if (created?.id === key.id) setCreated(undefined);
      setRemoveError(undefined);
      list.reload();
    } catch (err) {
      setRemoveError(messageOf(err));
    }
    setDeleting(undefined);
  };

  return (
    <section aria-labelledby="api-keys" class="card">
      <h2 id="api-keys">API keys</h2>
      <p class="muted">
        A key acts as the user whose email comes with it (<code>Authorization: Basic base64(&lt;email&gt;:&lt;key&gt;)</code>), limited to the key's groups.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {keys ? (
        keys.length === 0 ? (
          <p>No API key yet.</p>
        ) : (
          <table class="data" aria-labelledby="api-keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Groups</th>
                <th scope="col">Enabled</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="offscreen">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>{memberGroups(k.groups, choices.data)}</td>
                  <td>{k.enabled ? 'yes' : 'no'}</td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>
                    <button type="button" class="danger small" aria-label={`Delete API key ${k.name}`} onClick={() => setDeleting(k)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : (
        <p class="loading">Loading…</p>
      )}
      {created?.apiKey ? (
        <Notice kind="success">
          <p>
            API key <strong>{created.name}</strong>: copy it now, it is not shown again.
          </p>
          <p class="key-row">
            <label for="new-api-key">API key (shown once)</label>
            <input id="new-api-key" readOnly value={created.apiKey} spellcheck={false} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={created.apiKey} label="Copy API key" />
          </p>
          <p class="muted">
            Use it as <code>{user.email}:&lt;key&gt;</code> (or with the email of the user it should act as).
          </p>
        </Notice>
      ) : null}
      <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-key">
        <h3 id="new-key">New API key</h3>
        <div class="form-row">
          <Field label="Key name" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} error={nameError} />
          <SelectField label="Key group" options={groupOptions(choices.data)} value={group} onChange={(e) => setGroup(e.currentTarget.value)} />
        </div>
        <button type="submit">Create API key</button>
      </form>
      {deleting ? (
        <ConfirmDialog title="Delete this API key?" confirmLabel="Delete API key" onConfirm={() => void remove(deleting)} onCancel={() => setDeleting(undefined)}>
          <p>Calls made with the key {deleting.name} are refused from now on.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
