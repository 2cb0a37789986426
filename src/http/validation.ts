import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError, invalidParameter } from '../errors.js';

// Bodies are JSON and keep their types: `"secret": 123` is an error, not the string "123".
// Query strings and path parameters arrive as text and are coerced to the schema's types, integers only from
// canonical decimal text (see `compileText`).
const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: true, allErrors: false, strict: false });
const textAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: false, strict: false });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv.compile(schema as object) : compileText(schema as TextSchema)) as ReturnType<FastifySchemaCompiler<unknown>>;

/**
 * An id or a count written the one way: digits, no sign, no leading zero. ajv's coercion alone takes anything
 * `Number()` takes (`+1`, `00001`, `0x10`, `1e3`, `1.0`, `" 1"`), so one resource answered to many paths and
 * `1e20` reached PostgreSQL as an out-of-range bigint. The size is left to the schema's `maximum`.
 */
const CANONICAL_INTEGER = /^(?:0|[1-9][0-9]*)$/;

interface TextSchema {
  properties?: Record<string, { type?: unknown }>;
}

/** A query or path validator: canonical text for every integer property, then ajv's checks and coercion. */
function compileText(schema: TextSchema): ValidateFunction {
  const validate = textAjv.compile(schema as object);
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  if (integers.length === 0) return validate;
  const strict = ((data: Record<string, unknown> | null) => {
    for (const name of integers) {
      const raw = data?.[name];
      if (raw === undefined || (typeof raw === 'string' && CANONICAL_INTEGER.test(raw))) continue;
      strict.errors = [{ keyword: 'canonicalInteger', instancePath: `/${name}`, schemaPath: '', params: { raw }, message: '' }];
      return false;
    }
    const valid = validate(data);
    strict.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return strict;
}

/** `/events/0/eventType` → `events[0].eventType`. */
function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** One ajv error → "field must …", naming the field and the rule it broke. */
export function describeValidationError(error: ErrorObject, part: string): string {
  const params = error.params as Record<string, unknown>;
  const where = part === 'querystring' ? 'query parameter' : part === 'params' ? 'path parameter' : part === 'headers' ? 'header' : 'field';
  if (error.keyword === 'required') return `${where} ${fieldName(error.instancePath, String(params.missingProperty))} is required`;
  const field = fieldName(error.instancePath) || 'body';
  const subject = field === 'body' ? 'the body' : `${where} ${field}`;
  switch (error.keyword) {
    case 'type': {
      const types = String(params.type).split(',').map((t) => TYPE_NAMES[t] ?? t);
      return `${subject} must be ${types.join(' or ')}`;
    }
    case 'enum':
      return `${subject} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${subject} must be ${JSON.stringify(params.allowedValue)}`;
    case 'minLength':
      return Number(params.limit) === 1 ? `${subject} must not be empty` : `${subject} must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `${subject} must be at most ${params.limit} characters long`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${subject} must be ${params.comparison} ${params.limit}`;
    case 'minItems':
      return `${subject} must have at least ${params.limit} item${Number(params.limit) === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${subject} must have at most ${params.limit} items`;
    case 'pattern':
      return `${subject} must match ${params.pattern}`;
    case 'canonicalInteger': {
      const raw = typeof params.raw === 'string' ? JSON.stringify(params.raw.slice(0, 40)) : 'more than one value';
      return `${subject} must be a whole number in plain decimal digits (no sign, leading zero, space, exponent or hex), got ${raw}`;
    }
    case 'additionalProperties':
      return `${where} ${fieldName(error.instancePath, String(params.additionalProperty))} is not allowed`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

/** The field one ajv error is about, as describeValidationError names it; none for the body as a whole. */
export function validationErrorField(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return fieldName(error.instancePath, String(params.missingProperty));
  if (error.keyword === 'additionalProperties') return fieldName(error.instancePath, String(params.additionalProperty));
  return fieldName(error.instancePath) || undefined;
}

/** The request's first validation error, with the field it is about (the error handler answers both). */
export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  const first = errors[0];
  const error = new Error(first ? describeValidationError(first, dataVar) : `${dataVar} is invalid`);
  const field = first && validationErrorField(first);
  return field === undefined ? error : Object.assign(error, { field });
}

/**
 * The largest body a caller without a session or API key may send: sign-in (a login name and a password of at most
 * 1024 characters each, in UTF-8) fits with room to spare.
 */
export const ANONYMOUS_BODY_LIMIT_BYTES = 16 * 1024;

/** Deepest nesting of arrays and objects a JSON body may have; no request of this API needs more than 4. */
export const MAX_JSON_DEPTH = 64;

/** `matches[0].nodes[3]`, or `["odd key"]` for a key that is not a plain name. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key.slice(0, 40))}]`;
}

const subjectOf = (path: string) => (path ? `field ${path}` : 'the body');

/** Why a string cannot be stored as text: PostgreSQL refuses U+0000 (22021), and a lone surrogate is no character. */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the character U+0000';
  if (/[\uD800-\uDFFF]/u.test(text)) return 'must be valid Unicode (it holds a lone surrogate)';
  return undefined;
}

/**
 * The first thing in a parsed JSON body that no route may receive, as a message naming the field, or undefined:
 * nesting deeper than MAX_JSON_DEPTH, a string or key PostgreSQL cannot store, and the keys Fastify's own parser
 * refuses (`__proto__`, `constructor.prototype`), which a later merge could turn into prototype pollution.
 * Iterative on purpose: a recursive walk (ajv, JSON.stringify) is what a body of nested arrays overflows.
 *
 * Two passes: a cheap one that only says whether there is a problem, and, when there is, the one that names the
 * field. The cheap pass allocates nothing per number, boolean or null and builds no field names. Measured here on a
 * 1 MiB body of 500,000 numbers: naming every element took 300–460 ms a call (JSON.parse: ~16 ms); the cheap pass
 * 23–38 ms on its first, cold calls and 0.2–0.3 ms once compiled; 100,000 short strings: 44–62 ms → 3.5–4.5 ms.
 */
export function findJsonProblem(root: unknown): string | undefined {
  return hasJsonProblem(root) ? describeJsonProblem(root) : undefined;
}

function hasJsonProblem(root: unknown): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value === 'string') {
      if (textProblem(value)) return true;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return true;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === 'string') {
          if (textProblem(item)) return true;
        } else if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const item = (value as Record<string, unknown>)[key];
      if (textProblem(key) || key === '__proto__' || key === 'constructor') return true;
      values.push(item);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** The message for the first problem, in the body's own order; only for a body `hasJsonProblem` found one in. */
function describeJsonProblem(root: unknown): string | undefined {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (pending.length > 0) {
    const { value, path, depth } = pending.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return `${subjectOf(path)} ${problem}`;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `${subjectOf(path)} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;
    const children: { value: unknown; path: string; depth: number }[] = [];
    if (Array.isArray(value)) {
      value.forEach((item, i) => children.push({ value: item, path: childPath(path, i), depth: depth + 1 }));
    } else {
      for (const [key, item] of Object.entries(value)) {
        const problem = textProblem(key);
        if (problem) return `a key of ${subjectOf(path)} ${problem}`;
        if (key === '__proto__' || (key === 'constructor' && item !== null && typeof item === 'object' && 'prototype' in item)) {
          return `${subjectOf(childPath(path, key))} is not allowed`;
        }
        children.push({ value: item, path: childPath(path, key), depth: depth + 1 });
      }
    }
    // Reversed, so the first problem in the body's own order is the one reported.
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
  }
  return undefined;
}

/**
 * The only body this API reads is UTF-8 JSON. Fastify's default parsers go (its `text/plain` one let a cross-site
 * HTML form POST a ping or a redelivery), and this one takes `application/json` alone, with no charset or UTF-8:
 * any other body is a 415 on every route, whether or not it has a body schema. A request with no body at all
 * (no Content-Type, no length) still reaches routes that take none (ping, redeliver, logout).
 */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/**
 * Query parameters hold text the routes hand to the database (a search's `q`, a filter), and PostgreSQL refuses
 * U+0000 in text: a `?q=%00` was a 500. The body's strings are checked as they are parsed; these are checked here,
 * for every route, before its schema.
 */
export function registerQueryTextCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query || typeof query !== 'object') return;
    for (const [name, value] of Object.entries(query)) {
      for (const text of Array.isArray(value) ? value : [value]) {
        const problem = typeof text === 'string' ? textProblem(text) : undefined;
        if (problem) throw invalidParameter(`query parameter ${name.slice(0, 40)} ${problem}`, name.slice(0, 40));
      }
    }
  });
}

/** The same limit, told by Content-Length before the body is read (a chunked body is checked once read). */
export function refuseLargeAnonymousBody(request: FastifyRequest): void {
  if (request.principal !== null) return;
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > ANONYMOUS_BODY_LIMIT_BYTES) {
    throw new AppError('payload_too_large', `the request body is larger than the limit of ${ANONYMOUS_BODY_LIMIT_BYTES} bytes for a caller not signed in`);
  }
}

function parseJsonBody(request: FastifyRequest, text: string): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('invalid_parameter', `the body must be UTF-8 JSON, got charset ${JSON.stringify(charset.slice(0, 40))}`, 415);
  }
  // A caller not signed in (sign-in itself, or a route that will refuse it) sends small bodies: nothing it may
  // send needs more, and parsing and checking a large one is work anyone could make the process do.
  if (request.principal === null && (text.length > ANONYMOUS_BODY_LIMIT_BYTES || Buffer.byteLength(text) > ANONYMOUS_BODY_LIMIT_BYTES)) {
    throw new AppError('payload_too_large', `the request body is larger than the limit of ${ANONYMOUS_BODY_LIMIT_BYTES} bytes for a caller not signed in`);
  }
  if (text.trim() === '') {
    // An empty body where none is read is no body (a client that always sends the header); elsewhere, an error.
    if (request.routeOptions.schema?.body === undefined) return undefined;
    throw invalidParameter('the body is empty but Content-Type is application/json: send a JSON body');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidParameter(`the body is not valid JSON (${(err as Error).message})`);
  }
  const problem = findJsonProblem(value);
  if (problem) throw invalidParameter(problem);
  return value;
}
