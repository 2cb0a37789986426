import { Type, type Static } from 'typebox';
import { MAX_INT4, Timestamp } from '../http/schemas.js';
import { MAX_GROUPS_PER_MEMBER } from './groups.js';

/** The API shapes of auth (sign-in, users, API keys), declared once: the types are derived, the console imports them. */
/**
 * A group a user or an API key is in: the built-in Admin and Analyst as the contract shows them, `{id, name, builtin}`;
 * a custom group also names its data source (LKE's groups belong to one).
 */
export const GroupSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    builtin: Type.Boolean(),
    sourceKey: Type.Optional(Type.String({ description: "a custom group's data source; absent for the built-in groups" })),
  },
  { $id: 'Group' },
);
export type Group = Static<typeof GroupSchema>;

export const UserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  groups: Type.Array(GroupSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'User' });
/** A user as the API shows it: never a password or its hash. */
export type User = Static<typeof UserSchema>;

export const ApplicationSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  apiKey: Type.Optional(Type.String({ description: 'shown in the creation answer only' })),
  enabled: Type.Boolean(),
  groups: Type.Array(GroupSchema),
  rights: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'Application', description: 'An API key: it acts for a user, within its own groups' });
/** An API key's record as the API shows it: the key itself only in the answer that created it. */
export type Application = Static<typeof ApplicationSchema>;

const GroupId = Type.Integer({ minimum: 1, maximum: MAX_INT4 });
/** The groups a user or an API key is given: ids, checked against the groups in the database (auth/membership.ts). */
export const GroupIds = Type.Array(GroupId, { minItems: 1, maxItems: MAX_GROUPS_PER_MEMBER });
/** LKE's `addedGroups` and `removedGroups` of a user's PATCH: changes to the set rather than the whole of it. */
export const GroupIdChanges = Type.Array(GroupId, { maxItems: MAX_GROUPS_PER_MEMBER });
