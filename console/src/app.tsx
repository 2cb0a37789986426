import { useEffect, useState } from 'preact/hooks';
import { AlertPage, NewAlertPage, type AlertTab } from './alerts/alert-page';
import { AlertsIndex, AlertsPage } from './alerts/alerts-page';
import { get, onSignedOut, post } from './api';
import { AuditPage } from './audit/audit-page';
import { CasePage } from './cases/case-page';
import { InboxPage } from './cases/inbox-page';
import { INBOX_PATH } from './cases/inbox-query';
import { Link } from './components/link';
import { AdminsOnly, PageTitle } from './components/page';
import { GroupPage } from './groups/group-page';
import { GroupsIndex, GroupsPage } from './groups/groups-page';
import { ReceiverExamplePage } from './webhooks/receiver-example';
import { SearchPage } from './deliveries/search';
import { SettingsPage } from './settings/settings';
import { SignInPage } from './auth/sign-in';
import { UsersPage } from './users/users';
import { WebhookPage } from './webhooks/webhook';
import { WebhooksPage } from './webhooks/webhooks';
import { match, navigate, safeNext, useLocation } from './router';
import { SessionContext, type Session } from './session';
import { isAdmin, type User } from './types';

/**
 * The shell: who is signed in (GET /api/auth/me), the header with the navigation and "Sign out", and the page for
 * the path. Signed out, every page but sign-in sends to `/?next=<page>` and comes back after.
 */
export function App() {
  const { path, query } = useLocation();
  const [user, setUser] = useState<User | null | undefined>(undefined);

  useEffect(() => {
    get<User>('/api/auth/me').then(setUser, () => setUser(null));
    return onSignedOut(() => setUser(null));
  }, []);

  const signedOutElsewhere = user === null && path !== '/';
  useEffect(() => {
    if (signedOutElsewhere) navigate(`/?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
  }, [signedOutElsewhere]);

  if (user === undefined || signedOutElsewhere) return <p class="loading">Loading…</p>;
  if (user === null) {
    return (
      <main class="sign-in-main">
        <SignInPage
          next={safeNext(query.get('next'))}
          onSignedIn={(signedIn, next) => {
            setUser(signedIn);
            navigate(next ?? (isAdmin(signedIn) ? '/webhooks' : INBOX_PATH), { replace: true });
          }}
        />
      </main>
    );
  }

  const session: Session = { user, admin: isAdmin(user) };
  const signOut = async () => {
    await post('/api/auth/logout').catch(() => undefined);
    setUser(null);
    navigate('/', { replace: true });
  };

  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <span class="brand">Alert Webhooks</span>
        <nav aria-label="Main">
          <NavLink href={INBOX_PATH} current={path === INBOX_PATH || path.startsWith('/alerts/')}>
            Cases
          </NavLink>
          {session.admin ? (
            <>
              <NavLink href="/alerts" current={path === '/alerts' || (path.startsWith('/sources/') && !isGroupsPath(path))}>
                Alerts
              </NavLink>
              <NavLink href="/webhooks" current={path.startsWith('/webhooks')}>
                Webhooks
              </NavLink>
              <NavLink href="/deliveries" current={path === '/deliveries'}>
                Search deliveries
              </NavLink>
              <NavLink href="/settings" current={path === '/settings'}>
                Settings
              </NavLink>
              <NavLink href="/users" current={path === '/users'}>
                Users and API keys
              </NavLink>
              <NavLink href="/groups" current={path === '/groups' || isGroupsPath(path)}>
                Groups
              </NavLink>
              <NavLink href="/audit" current={path === '/audit'}>
                Audit
              </NavLink>
            </>
          ) : null}
        </nav>
        <span class="who">
          Signed in as <strong>{user.username}</strong>
        </span>
        <button type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main>
        <Page path={path} query={query} session={session} />
      </main>
    </SessionContext.Provider>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

const isGroupsPath = (path: string) => match('/sources/:sourceKey/groups', path) !== null || match('/sources/:sourceKey/groups/:groupId', path) !== null;

function NavLink({ href, current, children }: { href: string; current: boolean; children: string }) {
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

function Page({ path, query, session }: { path: string; query: URLSearchParams; session: Session }) {
  const casePath = match('/alerts/:alertId/case/:caseId', path);
  if (casePath) return <CasePage key={path} alertId={casePath.alertId!} caseId={casePath.caseId!} />;

  // The start page: the webhooks for an admin, the case inbox for everyone else.
  if (path === '/') return <Redirect to={session.admin ? '/webhooks' : INBOX_PATH} />;
  if (path === INBOX_PATH) return <InboxPage query={query} />;

  const webhook = match('/webhooks/:id', path);
  const alerts = match('/sources/:sourceKey/alerts', path);
  const newAlert = match('/sources/:sourceKey/alerts/new', path);
  const alert = newAlert ? null : match('/sources/:sourceKey/alerts/:alertId', path);
  const alertTab = match('/sources/:sourceKey/alerts/:alertId/:tab', path);
  const tab = alertTab && (alertTab.tab === 'runs' || alertTab.tab === 'cases') ? (alertTab.tab as AlertTab) : undefined;
  const groups = match('/sources/:sourceKey/groups', path);
  const group = match('/sources/:sourceKey/groups/:groupId', path);
  const alertPage: { sourceKey: string; alertId: string; tab: AlertTab } | null = alert
    ? { sourceKey: alert.sourceKey!, alertId: alert.alertId!, tab: 'definition' }
    : tab
      ? { sourceKey: alertTab!.sourceKey!, alertId: alertTab!.alertId!, tab }
      : null;
  const known =
    path === '/webhooks' || webhook || path === '/deliveries' || path === '/settings' || path === '/users' || path === '/receiver-example' || path === '/alerts' || alerts || newAlert || alertPage || path === '/groups' || groups || group || path === '/audit';
  if (!known) {
    return (
      <section>
        <PageTitle title="Not found">Page not found</PageTitle>
        <p>
          There is no page at <code>{path}</code>. <Link href="/">Go to the start page</Link>.
        </p>
      </section>
    );
  }
  // Everything but the case pages and the inbox is for admins (the API refuses the rest to others anyway).
  if (!session.admin) return <AdminsOnly />;
  if (path === '/webhooks') return <WebhooksPage query={query} />;
  if (path === '/deliveries') return <SearchPage query={query} />;
  if (webhook) return <WebhookPage key={webhook.id} id={webhook.id!} />;
  if (path === '/alerts') return <AlertsIndex />;
  if (alerts) return <AlertsPage key={alerts.sourceKey} sourceKey={alerts.sourceKey!} />;
  if (newAlert) return <NewAlertPage sourceKey={newAlert.sourceKey!} />;
  if (alertPage) return <AlertPage key={`${alertPage.sourceKey}/${alertPage.alertId}`} sourceKey={alertPage.sourceKey} alertId={alertPage.alertId} tab={alertPage.tab} />;
  if (path === '/settings') return <SettingsPage />;
  if (path === '/receiver-example') return <ReceiverExamplePage />;
  if (path === '/groups') return <GroupsIndex />;
  if (groups) return <GroupsPage key={groups.sourceKey} sourceKey={groups.sourceKey!} />;
  if (group) return <GroupPage key={path} sourceKey={group.sourceKey!} groupId={group.groupId!} />;
  if (path === '/audit') return <AuditPage query={query} />;
  return <UsersPage />;
}
