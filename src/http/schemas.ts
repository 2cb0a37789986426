import { Type, type TSchema } from 'typebox';

/** Shapes shared by many routes. Each route file holds its own bodies and answers. */
export const ErrorBody = Type.Object({ key: Type.String(), message: Type.String() }, { $id: 'ErrorBody' });

export const Timestamp = Type.String({ description: 'ISO 8601 UTC with milliseconds' });

export const PositiveId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const Paging = {
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
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
