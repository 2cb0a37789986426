import { ApiError } from '../api';
import { Link } from '../components/link';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { formatTime } from '../format';
import type { Alert, DataSource, SourceGroup } from '../types';
import { useApi } from '../use-api';
import { AccessRightsForm } from './access-rights-form';
import { groupsApiPath, groupsPath } from './group-paths';
import { usePropertyKeyRights } from './property-key-setting';

/** `/sources/:sourceKey/groups/:groupId`: one custom group, its facts and its access rights form. */
export function GroupPage({ sourceKey, groupId }: { sourceKey: string; groupId: string }) {
  const sources = useApi<DataSource[]>('/api/dataSources');
  const group = useApi<SourceGroup>(/^[1-9]\d{0,9}$/.test(groupId) ? `${groupsApiPath(sourceKey)}/${groupId}` : null);
  const alerts = useApi<{ items: Alert[] }>(`/api/${encodeURIComponent(sourceKey)}/alerts?limit=1000`);
  const propertyKeys = usePropertyKeyRights(sourceKey);
  const sourceName = sources.data?.find((s) => s.key === sourceKey)?.name ?? sourceKey;
  const back = (
    <p class="crumbs">
      <Link href={groupsPath(sourceKey)}>Groups of {sourceName}</Link>
    </p>
  );

  if (group.error instanceof ApiError && group.error.status === 404) {
    return (
      <section>
        {back}
        <PageTitle title="Group not found">Group not found</PageTitle>
        <p>
          {sourceName} has no group {groupId}.
        </p>
      </section>
    );
  }
  const error = group.error ?? alerts.error ?? propertyKeys.error;
  if (error) return <Notice kind="error">{error.message}</Notice>;
  if (!group.data || !alerts.data || propertyKeys.enabled === undefined) return <p class="loading">Loading the group…</p>;

  const g = group.data;
  return (
    <>
      {back}
      <PageTitle title={`Group ${g.name}`}>Group {g.name}</PageTitle>
      <section aria-labelledby="group-facts" class="card">
        <h2 id="group-facts" class="offscreen">
          The group
        </h2>
        <dl class="facts">
          <dt>Data source</dt>
          <dd>
            {sourceName} <code>{sourceKey}</code>
          </dd>
          <dt>Members</dt>
          <dd>
            {g.userCount} <span class="muted">(put users in it on the <Link href="/users">users page</Link>)</span>
          </dd>
          <dt>Created</dt>
          <dd>{formatTime(g.createdAt)}</dd>
          <dt>Updated</dt>
          <dd>{formatTime(g.updatedAt)}</dd>
        </dl>
      </section>
      {g.builtin ? (
        <p>A built-in group’s rights are fixed: Admin may do everything, Analyst reads everything, on every data source.</p>
      ) : (
        <AccessRightsForm key={g.id} group={g} alerts={alerts.data.items} propertyKeyRights={propertyKeys.enabled} onSaved={group.reload} />
      )}
    </>
  );
}
