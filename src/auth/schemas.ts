import { Type } from 'typebox';
import { MAX_INT4, Timestamp } from '../http/schemas.js';
import { MAX_GROUPS_PER_MEMBER } from './groups.js';

/** Shapes shared by the route files of auth (sign-in, users, API keys). */
export const GroupSchema = Type.Object({ id: Type.Integer(), name: Type.String(), builtin: Type.Boolean() }, { $id: 'Group' });

export const UserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  groups: Type.Array(GroupSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'User' });

/** The groups a user or an API key is given: ids, checked against the built-in groups by `checkGroups`. */
export const GroupIds = Type.Array(Type.Integer({ minimum: 1, maximum: MAX_INT4 }), { minItems: 1, maxItems: MAX_GROUPS_PER_MEMBER });
