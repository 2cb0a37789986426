import { useState } from 'preact/hooks';
import { messageOf, put } from '../api';
import { Notice } from '../components/notice';
import { ACTIONS, type Alert, type SourceGroup } from '../types';
import { ACTION_WORDS } from './action-words';
import { groupsApiPath } from './group-paths';
import { ItemRights, PropertyRights } from './item-rights';
import { formOf, rightsOf, type RightsForm } from './rights-model';

/**
 * A custom group's access rights on its data source, as a form: node categories and edge types with their levels,
 * the alerts it reads, the actions it may do and, when the source's property-key rights are on, property keys.
 * Saving replaces the group's whole set (PUT …/access_rights), as LKE's client does.
 */
export function AccessRightsForm({
  group,
  alerts,
  propertyKeyRights,
  onSaved,
}: {
  group: SourceGroup;
  alerts: Alert[];
  /** The source's setting; null when the service does not say (the property keys are offered, and refused if it is off). */
  propertyKeyRights: boolean | null;
  onSaved: () => void;
}) {
  const [form, setForm] = useState<RightsForm>(() => formOf(group.accessRights));
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);
  const edit = (change: Partial<RightsForm>) => {
    setOutcome(undefined);
    setForm((f) => ({ ...f, ...change }));
  };
  const toggle = <T,>(set: ReadonlySet<T>, item: T) => {
    const next = new Set(set);
    if (next.has(item)) next.delete(item);
    else next.add(item);
    return next;
  };
  // Rights on alerts deleted since: still stored, shown so they can be removed.
  const goneAlerts = [...form.alertIds].filter((id) => !alerts.some((a) => a.id === id));

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setOutcome(undefined);
    try {
      await put(`${groupsApiPath(group.sourceKey)}/${group.id}/access_rights`, { accessRights: rightsOf(form, propertyKeyRights !== false) });
      setOutcome({ ok: true, text: 'Access rights saved.' });
      onSaved();
    } catch (err) {
      setOutcome({ ok: false, text: `Not saved: ${messageOf(err)}` });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card rights-form" aria-labelledby="access-rights" onSubmit={(e) => void save(e)} noValidate>
      <h2 id="access-rights">Access rights of {group.name}</h2>
      <fieldset class="rights">
        <legend>Alerts</legend>
        <p class="hint">Members see the cases of the alerts they may read, and nothing of the others: not in lists, not by link.</p>
        <label class="check">
          <input type="checkbox" checked={form.everyAlert} onChange={() => edit({ everyAlert: !form.everyAlert })} /> Every alert of this data source, present and
          future (*)
        </label>
        <ul class="check-list">
          {alerts.map((a) => (
            <li key={a.id}>
              <label class="check">
                <input type="checkbox" disabled={form.everyAlert} checked={form.everyAlert || form.alertIds.has(a.id)} onChange={() => edit({ alertIds: toggle(form.alertIds, a.id) })} />{' '}
                {a.title} <span class="muted">#{a.id}</span>
              </label>
            </li>
          ))}
          {goneAlerts.map((id) => (
            <li key={id}>
              <label class="check">
                <input type="checkbox" disabled={form.everyAlert} checked onChange={() => edit({ alertIds: toggle(form.alertIds, id) })} /> Alert #{id}{' '}
                <span class="muted">(deleted)</span>
              </label>
            </li>
          ))}
        </ul>
        {alerts.length === 0 && goneAlerts.length === 0 ? <p class="muted">This data source has no alert yet.</p> : null}
      </fieldset>
      <div class="columns">
        <ItemRights title="Node categories" noun="node category" anyLevel={form.anyCategory} rows={form.categories} onAnyLevel={(anyCategory) => edit({ anyCategory })} onRows={(categories) => edit({ categories })} />
        <ItemRights title="Edge types" noun="edge type" anyLevel={form.anyEdgeType} rows={form.edgeTypes} onAnyLevel={(anyEdgeType) => edit({ anyEdgeType })} onRows={(edgeTypes) => edit({ edgeTypes })} />
      </div>
      {propertyKeyRights !== false ? (
        <>
          {propertyKeyRights === null ? (
            <p class="hint">Property keys count only while the data source’s property-key rights are on (groups page); while they are off, the service refuses them.</p>
          ) : null}
          <div class="columns">
            <PropertyRights title="Node properties" noun="node property" itemNoun="category" rows={form.nodeProperties} onRows={(nodeProperties) => edit({ nodeProperties })} />
            <PropertyRights title="Edge properties" noun="edge property" itemNoun="type" rows={form.edgeProperties} onRows={(edgeProperties) => edit({ edgeProperties })} />
          </div>
        </>
      ) : (
        <p class="muted">Property-key rights are off on this data source: members read every property of what they may read. Turn them on on the groups page to set them here.</p>
      )}
      <fieldset class="rights">
        <legend>Actions</legend>
        <p class="hint">Marked “enforced”: what this service checks. The others are kept for LKE’s client and change nothing here.</p>
        <ul class="check-list actions-list">
          {ACTIONS.map((action) => (
            <li key={action}>
              <label class="check">
                <input type="checkbox" checked={form.actions.has(action)} onChange={() => edit({ actions: toggle(form.actions, action) })} /> <code>{action}</code>{' '}
                <span class="muted">{ACTION_WORDS[action].words}</span>
                {ACTION_WORDS[action].enforced ? <span class="badge badge-confirmed">enforced</span> : null}
              </label>
            </li>
          ))}
        </ul>
      </fieldset>
      {outcome ? <Notice kind={outcome.ok ? 'success' : 'error'}>{outcome.text}</Notice> : null}
      <button type="submit" disabled={busy}>
        Save access rights
      </button>
    </form>
  );
}
