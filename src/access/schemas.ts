import { Type, type Static } from 'typebox';
import { MAX_INT4, MAX_PAGE_SIZE, PositiveId, Timestamp } from '../http/schemas.js';
import { AccessRightSchema, ACTIONS, ADMIN_ACTIONS, MAX_ACCESS_RIGHTS } from './access-rights.js';

/**
 * The API shapes of groups and their access rights, as @linkurious/rest-client 4.1.2's `UserAPI` and
 * `AccessRightAPI` send and read them (its `Group`, `GroupName`, `SearchUsersSimpleResponse`), declared once.
 */

export const MAX_GROUP_NAME_LENGTH = 200;
/** Custom groups one data source may have: a group list (answered whole, as LKE does) stays a bounded answer. */
export const MAX_GROUPS_PER_SOURCE = 500;
/** The `sourceKey` LKE gives the built-in groups, which belong to every data source. */
export const EVERY_SOURCE = '*';
/** A group's `uuid` as LKE's client may give it at creation (any RFC 4122 text form PostgreSQL's `uuid` reads). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * A data source key in a group route's path. Not the key's own pattern (sources/schemas.ts, which this folder cannot
 * import: sources imports access): a key no source has, well formed or not, answers `dataSource_unavailable`, the
 * key the client lists on every group method, where `invalid_parameter` would make it throw.
 */
export const GroupSourceKey = Type.String({ minLength: 1, maxLength: 200, description: 'a data source key' });

export const GroupParams = Type.Object({ sourceKey: GroupSourceKey, id: PositiveId });
export const GroupUsersParams = Type.Object({ sourceKey: GroupSourceKey, groupId: PositiveId });

export const DataSourceGroupSchema = Type.Object(
  {
    id: Type.Integer(),
    uuid: Type.String(),
    name: Type.String(),
    sourceKey: Type.String({ description: `the group's data source; "${EVERY_SOURCE}" for the built-in groups, which are every source's` }),
    builtin: Type.Boolean(),
    userCount: Type.Integer({ description: 'the users in the group (API keys not counted)' }),
    accessRights: Type.Array(AccessRightSchema),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'DataSourceGroup', description: "A group of a data source with its access rights (LKE's Group)" },
);
export type DataSourceGroup = Static<typeof DataSourceGroupSchema>;

export const GroupNameSchema = Type.Object(
  { id: Type.Integer(), uuid: Type.String(), name: Type.String(), sourceKey: Type.String() },
  { $id: 'GroupName', description: "A group's name and ids (LKE's GroupName)" },
);
export type GroupName = Static<typeof GroupNameSchema>;

export const GroupUserSchema = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });
export const GroupUsersSchema = Type.Object(
  { found: Type.Integer({ description: 'the users of the group, all pages together' }), results: Type.Array(GroupUserSchema) },
  { $id: 'GroupUsers' },
);
export type GroupUsers = Static<typeof GroupUsersSchema>;

const GroupName = Type.String({ minLength: 1, maxLength: MAX_GROUP_NAME_LENGTH });
export const CreateGroupBody = Type.Object({ name: GroupName, uuid: Type.Optional(Type.String({ pattern: UUID_PATTERN })) });
export const RenameGroupBody = Type.Object({ name: GroupName });
/** A group's whole set of rights: what a PUT leaves it with. */
export const SetAccessRightsBody = Type.Object({ accessRights: Type.Array(AccessRightSchema, { maxItems: MAX_ACCESS_RIGHTS }) });
export const AccessRightsSettingsBody = Type.Object({ propertyKeyAccessRights: Type.Boolean() });

export const GroupNamesQuery = Type.Object({ action: Type.Optional(Type.Enum([...ACTIONS, ...ADMIN_ACTIONS], { description: 'only the groups that have this action' })) });

export const GROUP_USERS_SORT = ['id', 'username', 'email'] as const;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
const SortBy = Type.Optional(Type.Enum([...GROUP_USERS_SORT]));
const SortDirection = Type.Optional(Type.Enum([...SORT_DIRECTIONS]));
/**
 * LKE's client sends its query parameters in snake_case (`sort_by`, `sort_direction`); the camelCase spellings of its
 * types are taken too, for a caller writing the URL by hand.
 */
export const GroupUsersQuery = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
  sort_by: SortBy,
  sortBy: SortBy,
  sort_direction: SortDirection,
  sortDirection: SortDirection,
});
export type GroupUsersQuery = Static<typeof GroupUsersQuery>;
