import { Type, type Static } from 'typebox';

/**
 * Access rights in the shapes of @linkurious/rest-client 4.1.2 (`AccessRight`, its `Action` enums): what a custom
 * group may do on its data source. Declared once: the route schemas, the stored rows and the console read these.
 */

/** The actions a custom group may be given (LKE's `Action`). docs/security.md says which ones have an effect here. */
export const ACTIONS = [
  'admin.connect',
  'admin.index',
  'admin.users',
  'admin.schema',
  'admin.schema.read',
  'admin.alerts',
  'manageAlert',
  'admin.report',
  'admin.styles',
  'admin.spaces',
  'runQuery',
  'rawReadQuery',
  'rawWriteQuery',
  'manageQuery',
  'runCustomAction',
  'writeCustomAction',
  'manageCustomAction',
  'applyNodeGrouping',
  'createNodeGrouping',
  'manageNodeGrouping',
] as const;
export type Action = (typeof ACTIONS)[number];

/** LKE's `AdminAction`: the built-in Admin group's alone, refused on a custom group. */
export const ADMIN_ACTIONS = ['admin.app', 'admin.users.delete', 'admin.config', 'admin.webhooks'] as const;

/**
 * The actions that change what this service answers. The others are stored and answered, for the client's sake,
 * and have no effect (features this service does not have).
 *  - rawReadQuery: POST /api/:sourceKey/graph/run/query and alertPreview.
 */
export const ENFORCED_ACTIONS: readonly Action[] = ['rawReadQuery'];

/** The built-in Analyst's actions on every source: what every signed-in user could do before groups existed. */
export const ANALYST_ACTIONS: readonly Action[] = ['rawReadQuery', 'runQuery'];

export const TARGET_TYPES = ['nodeCategory', 'edgeType', 'nodePropertyKey', 'edgePropertyKey', 'action', 'alert'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/** Node category and edge type rights, lowest first: each grants what the ones before it do. */
export const ITEM_LEVELS = ['none', 'read', 'edit', 'write'] as const;
export type ItemLevel = (typeof ITEM_LEVELS)[number];
export const PROPERTY_LEVELS = ['none', 'read', 'edit'] as const;

/** The target name that stands for every node category, edge type, property key or alert of the source. */
export const ANY_TARGET = '*';

/** Names of categories, types, property keys and alerts (LKE bounds none; these are generous and keep rows small). */
export const MAX_TARGET_NAME_LENGTH = 256;
/** Rights one group may hold: a PUT carries them all. */
export const MAX_ACCESS_RIGHTS = 10_000;

const TargetName = Type.String({ minLength: 1, maxLength: MAX_TARGET_NAME_LENGTH });

export const AccessRightSchema = Type.Union(
  [
    Type.Object({ targetType: Type.Literal('nodeCategory'), targetName: TargetName, type: Type.Enum([...ITEM_LEVELS]) }, { additionalProperties: false }),
    Type.Object({ targetType: Type.Literal('edgeType'), targetName: TargetName, type: Type.Enum([...ITEM_LEVELS]) }, { additionalProperties: false }),
    Type.Object(
      { targetType: Type.Literal('nodePropertyKey'), targetItemType: TargetName, targetName: TargetName, type: Type.Enum([...PROPERTY_LEVELS]) },
      { additionalProperties: false },
    ),
    Type.Object(
      { targetType: Type.Literal('edgePropertyKey'), targetItemType: TargetName, targetName: TargetName, type: Type.Enum([...PROPERTY_LEVELS]) },
      { additionalProperties: false },
    ),
    Type.Object({ targetType: Type.Literal('action'), targetName: Type.Enum([...ACTIONS, ...ADMIN_ACTIONS]), type: Type.Enum(['do', 'none']) }, { additionalProperties: false }),
    Type.Object(
      { targetType: Type.Literal('alert'), targetName: Type.String({ pattern: '^(\\*|[1-9][0-9]{0,9})$', description: 'an alert id, or * for every alert of the source' }), type: Type.Enum(['read', 'none']) },
      { additionalProperties: false },
    ),
  ],
  { $id: 'AccessRight' },
);
export type AccessRight = Static<typeof AccessRightSchema>;
