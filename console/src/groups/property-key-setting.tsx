import { useEffect, useId, useState } from 'preact/hooks';
import { messageOf, patch } from '../api';
import { Notice } from '../components/notice';
import { useApi } from '../use-api';

/** Where the source's setting is read: its admin view (GET /api/admin/sources/:sourceKey). */
export const sourceApiPath = (sourceKey: string) => `/api/admin/sources/${encodeURIComponent(sourceKey)}`;

/**
 * The data source's property-key setting: undefined while it loads, null when the service does not say (an older
 * service answers the source without it); `reload` after it changed.
 */
export function usePropertyKeyRights(sourceKey: string): { enabled: boolean | null | undefined; error: Error | undefined; reload: () => void } {
  const source = useApi<{ propertyKeyAccessRights?: boolean }>(sourceApiPath(sourceKey));
  const said = source.data?.propertyKeyAccessRights;
  return { enabled: source.data ? (said ?? null) : undefined, error: source.error, reload: source.reload };
}

/**
 * LKE's per-source switch (PATCH /api/admin/:sourceKey/accessRights/settings): off, a member reads every property of
 * what they may read; on, only the property keys their groups' rights name.
 */
export function PropertyKeySetting({ sourceKey, sourceName }: { sourceKey: string; sourceName: string }) {
  const setting = usePropertyKeyRights(sourceKey);
  const [checked, setChecked] = useState<boolean>();
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  useEffect(() => setChecked(setting.enabled === null ? false : setting.enabled), [setting.enabled]);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setOutcome(undefined);
    try {
      await patch(`/api/admin/${encodeURIComponent(sourceKey)}/accessRights/settings`, { propertyKeyAccessRights: checked === true });
      setOutcome({ ok: true, text: checked ? 'Property-key rights are on.' : 'Property-key rights are off.' });
      setting.reload();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" aria-labelledby={`${id}-title`} onSubmit={(e) => void save(e)}>
      <h2 id={`${id}-title`}>Access rights settings of {sourceName}</h2>
      {setting.error ? <Notice kind="error">{setting.error.message}</Notice> : null}
      <div class="field checkbox">
        <input id={id} type="checkbox" disabled={checked === undefined} checked={checked === true} onChange={(e) => setChecked(e.currentTarget.checked)} />
        <label for={id}>Property-key access rights</label>
        <p class="hint">
          On: the members of custom groups read only the property keys their groups’ rights name (set on each group’s page). Off: every property of what they may
          read.
          {setting.enabled === null ? ' The service does not say which it is now: saving sets it.' : ''}
        </p>
      </div>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
      <button type="submit" class="secondary" disabled={busy || checked === undefined || checked === setting.enabled}>
        Save the setting
      </button>
    </form>
  );
}
