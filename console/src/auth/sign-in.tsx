import { useState } from 'preact/hooks';
import { ApiError, messageOf, post } from '../api';
import { Field } from '../components/field';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import type { User } from '../types';

/** POST /api/auth/login; the answer sets the session cookie. */
export function SignInPage({ next, onSignedIn }: { next: string | undefined; onSignedIn: (user: User, next: string | undefined) => void }) {
  const [usernameOrEmail, setUsernameOrEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await post<User>('/api/auth/login', { usernameOrEmail, password }), next);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'Wrong username, email or password.' : messageOf(err));
      setBusy(false);
    }
  };

  return (
    <section class="card sign-in">
      <PageTitle title="Sign in">Sign in to Alert Webhooks</PageTitle>
      {next ? <p>Sign in to open {next.startsWith('/alerts/') ? 'this case' : 'this page'}.</p> : null}
      <form onSubmit={(e) => void submit(e)}>
        <Field label="Username or email" name="username" autoComplete="username" required value={usernameOrEmail} onInput={(e) => setUsernameOrEmail(e.currentTarget.value)} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        {error ? <Notice kind="error">{error}</Notice> : null}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </section>
  );
}
