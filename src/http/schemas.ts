import { Type, type TSchema } from 'typebox';

/** Shapes shared by many routes. Each route file holds its own bodies and answers. */
export const ErrorBody = Type.Object({ key: Type.String(), message: Type.String() }, { $id: 'ErrorBody' });

export const Timestamp = Type.String({ description: 'ISO 8601 UTC with milliseconds' });

/** The largest PostgreSQL `integer`: ids of integer columns, and any integer the database is given. */
export const MAX_INT4 = 2_147_483_647;

/** An id of an `integer` column. In paths and queries, plain decimal digits only (src/http/validation.ts). */
export const PositiveId = Type.Integer({ minimum: 1, maximum: MAX_INT4 });

/** An id of a `bigint` column (deliveries): bounded by what a JavaScript number holds exactly. */
export const BigId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const Paging = {
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
};

export const GroupSchema = Type.Object({ id: Type.Integer(), name: Type.String(), builtin: Type.Boolean() });

export const UserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  groups: Type.Array(GroupSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** The error answers a route may give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}
