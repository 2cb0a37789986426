/**
 * The closed catalogue of error keys, each with its one HTTP status (docs/api.md, Errors): the keys the API answers,
 * and four the code raises under a name of its own that the API answers with LKE's key instead (ANSWERED_AS).
 * Every error body is `{key, message, field?}`; the message names the field and the rule that was broken, and `field`
 * names the field alone when the error is about one (as the request spells it: `url`, `events[0].sourceKey`).
 */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  dataSource_unavailable: 400,
  bad_graph_request: 400,
  constraint_violation: 400,
  invalid_alert_query: 400,
  invalid_alert_target: 400,
  property_key_access_rights_required: 400,
  unauthorized: 401,
  forbidden: 403,
  feature_disabled: 403,
  write_forbidden: 403,
  not_found: 404,
  api_not_found: 404,
  already_exists: 409,
  redundant_action: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  bug: 500,
  database_unavailable: 503,
  data_source_unavailable: 400,
  graph_request_timeout: 504,
} as const;

export type ErrorKey = keyof typeof ERROR_STATUS;

/**
 * Keys answered as LKE's key for the case, at that key's status: `@linkurious/rest-client` answers an error
 * (`isSuccess() === false`) only when its key is one the method lists and the status is under 500; any other key, or
 * any 5xx, it throws ("Unexpected error", "Internal server error"). Its methods list `forbidden` (a write refused),
 * `dataSource_unavailable` (a graph that does not answer, as for a source that does not exist) and, on createAlert and
 * updateAlert, `constraint_violation` (an alert's query or target that does not fit), never our names for these. The
 * code keeps its own names (an alert run's problems record them; a route tells a write from other refusals by them).
 */
export const ANSWERED_AS: Partial<Record<ErrorKey, ErrorKey>> = {
  write_forbidden: 'forbidden',
  data_source_unavailable: 'dataSource_unavailable',
  invalid_alert_query: 'constraint_violation',
  invalid_alert_target: 'constraint_violation',
};

/** The keys the API answers: the catalogue but those answered as another (ANSWERED_AS). */
export const ANSWERED_KEYS = (Object.keys(ERROR_STATUS) as ErrorKey[]).filter((key) => !(key in ANSWERED_AS));

/** The key an error is answered with (ANSWERED_AS), at that key's status. */
export function answeredKey(key: ErrorKey): ErrorKey {
  return ANSWERED_AS[key] ?? key;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly key: ErrorKey,
    message: string,
    status?: number,
    /** The field the error is about, when there is one. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'AppError';
    // 415 shares `invalid_parameter` with 400 (docs/api.md, Errors), so a caller may set the status.
    this.status = status ?? ERROR_STATUS[key];
  }
}

export const invalidParameter = (message: string, field?: string) => new AppError('invalid_parameter', message, undefined, field);
export const notFound = (what: string, id: number | string) => new AppError('not_found', `${what} ${id} was not found`);
export const alreadyExists = (message: string) => new AppError('already_exists', message);
export const featureDisabled = () =>
  new AppError('feature_disabled', 'Webhooks are disabled: set webhooks.enabled to true in the configuration to use them');

/**
 * The `code` an error carries (an errno such as `EEXIST`, a SQLSTATE such as `23505`, undici's `UND_ERR_…`), or
 * undefined: the one place that reads it off an unknown value.
 */
export function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Maps a unique-violation from PostgreSQL to `already_exists`, naming the field; anything else passes through. */
export function uniqueViolationAs(err: unknown, messagesByConstraint: Record<string, string>): unknown {
  const constraint = (err as { constraint?: unknown } | null)?.constraint;
  if (errorCode(err) === '23505' && typeof constraint === 'string' && messagesByConstraint[constraint]) {
    return alreadyExists(messagesByConstraint[constraint]);
  }
  return err;
}
