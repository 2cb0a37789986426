import { Type, type Static, type TSchema } from 'typebox';
import { ANSWERED_KEYS } from '../errors.js';

/**
 * Shapes of no one domain, shared by the route files of many. A shape shared by the route files of one domain
 * lives beside them in that domain's `schemas.ts` (it takes the domain's limits); never in a route file.
 */

/**
 * Every error answer: `key` from the closed catalogue (src/errors.ts), `message` naming the field and the rule, and
 * `field` when the error is about one.
 */
export const ErrorBody = Type.Object(
  {
    key: Type.Enum(ANSWERED_KEYS, { description: 'what went wrong, from the closed catalogue of error keys' }),
    message: Type.String({ description: 'for people: names the field and the rule that was broken' }),
    field: Type.Optional(Type.String({ description: 'the field the error is about, as the request spells it (url, events[0].sourceKey, webhooks.requestTimeoutMs)' })),
  },
  { $id: 'Error', description: 'An error: {key, message, field?}' },
);
export type ErrorAnswer = Static<typeof ErrorBody>;

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

/** Marks a schema that holds an event payload: the OpenAPI document shows it as one of the event schemas. */
export const EVENT_PAYLOAD_MARK = 'x-event-payload';

/** The largest PostgreSQL `integer`: ids of integer columns, and any integer the database is given. */
export const MAX_INT4 = 2_147_483_647;

/** An id of an `integer` column. In paths and queries, plain decimal digits only (src/http/validation.ts). */
export const PositiveId = Type.Integer({ minimum: 1, maximum: MAX_INT4 });

/** An id of a `bigint` column (deliveries): bounded by what a JavaScript number holds exactly. */
export const BigId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 1000;

/** `offset` and `limit` of a paged list, without defaults: for a route whose answer depends on whether they were sent. */
export const PagingParams = {
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
};

/** `offset` and `limit` of a paged list, filled in by the validator when left out (see `pageOf`). */
export const Paging = {
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT4, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
};

/**
 * The page a query asks for. The schema's defaults are applied by the validator at run time; their types stay
 * optional, so the same defaults are applied here too (and for `PagingParams`, where there are none).
 */
export function pageOf(query: { offset?: number | undefined; limit?: number | undefined }): { offset: number; limit: number } {
  return { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/** The error answers a route may give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}
