import { ACTIONS, type AccessRight, type Action, type ItemLevel } from '../types';

// A group's access rights (a list in LKE's shape, PUT whole) as the form edits them: a level per node category and
// edge type, the alerts it reads, the actions it may do, and property-key levels; and back.

export const ANY = '*';
export type PropertyLevel = Exclude<ItemLevel, 'write'>;

export interface ItemRow {
  name: string;
  level: ItemLevel;
}
export interface PropertyRow {
  itemType: string;
  key: string;
  level: PropertyLevel;
}

export interface RightsForm {
  /** The level of every category (`*`), and of the categories named apart from it. */
  anyCategory: ItemLevel;
  categories: ItemRow[];
  anyEdgeType: ItemLevel;
  edgeTypes: ItemRow[];
  /** `*`: every alert of the source, present and future. */
  everyAlert: boolean;
  alertIds: ReadonlySet<number>;
  actions: ReadonlySet<Action>;
  nodeProperties: PropertyRow[];
  edgeProperties: PropertyRow[];
}

export function formOf(rights: readonly AccessRight[]): RightsForm {
  const form: RightsForm = {
    anyCategory: 'none',
    categories: [],
    anyEdgeType: 'none',
    edgeTypes: [],
    everyAlert: false,
    alertIds: new Set(),
    actions: new Set(),
    nodeProperties: [],
    edgeProperties: [],
  };
  const alertIds = new Set<number>();
  const actions = new Set<Action>();
  for (const right of rights) {
    switch (right.targetType) {
      case 'nodeCategory':
        if (right.targetName === ANY) form.anyCategory = right.type;
        else form.categories.push({ name: right.targetName, level: right.type });
        break;
      case 'edgeType':
        if (right.targetName === ANY) form.anyEdgeType = right.type;
        else form.edgeTypes.push({ name: right.targetName, level: right.type });
        break;
      case 'nodePropertyKey':
        form.nodeProperties.push({ itemType: right.targetItemType, key: right.targetName, level: right.type });
        break;
      case 'edgePropertyKey':
        form.edgeProperties.push({ itemType: right.targetItemType, key: right.targetName, level: right.type });
        break;
      case 'alert':
        // `none` for one alert takes nothing back from `*` (src/access/source-access.ts): only reads are kept.
        if (right.type !== 'read') break;
        if (right.targetName === ANY) form.everyAlert = true;
        else alertIds.add(Number(right.targetName));
        break;
      case 'action':
        // LKE's AdminAction names are the built-in Admin's, refused on a custom group: never among these.
        if (right.type === 'do' && isGroupAction(right.targetName)) actions.add(right.targetName);
        break;
    }
  }
  return { ...form, alertIds, actions };
}

const isGroupAction = (name: string): name is Action => (ACTIONS as readonly string[]).includes(name);

/** The form as the list PUT …/access_rights takes: rows without a name are left out (an added row not filled in). */
export function rightsOf(form: RightsForm, propertyKeyRights: boolean): AccessRight[] {
  const rights: AccessRight[] = [];
  if (form.anyCategory !== 'none' || form.categories.length > 0) rights.push({ targetType: 'nodeCategory', targetName: ANY, type: form.anyCategory });
  for (const row of form.categories) if (row.name.trim()) rights.push({ targetType: 'nodeCategory', targetName: row.name.trim(), type: row.level });
  if (form.anyEdgeType !== 'none' || form.edgeTypes.length > 0) rights.push({ targetType: 'edgeType', targetName: ANY, type: form.anyEdgeType });
  for (const row of form.edgeTypes) if (row.name.trim()) rights.push({ targetType: 'edgeType', targetName: row.name.trim(), type: row.level });
  if (form.everyAlert) rights.push({ targetType: 'alert', targetName: ANY, type: 'read' });
  else for (const id of [...form.alertIds].sort((a, b) => a - b)) rights.push({ targetType: 'alert', targetName: String(id), type: 'read' });
  for (const action of form.actions) rights.push({ targetType: 'action', targetName: action, type: 'do' });
  // Property-key rights exist only while the source's setting is on (LKE refuses them otherwise).
  if (propertyKeyRights) {
    for (const row of form.nodeProperties) if (row.itemType.trim() && row.key.trim()) rights.push({ targetType: 'nodePropertyKey', targetItemType: row.itemType.trim(), targetName: row.key.trim(), type: row.level });
    for (const row of form.edgeProperties) if (row.itemType.trim() && row.key.trim()) rights.push({ targetType: 'edgePropertyKey', targetItemType: row.itemType.trim(), targetName: row.key.trim(), type: row.level });
  }
  return rights;
}
