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
 */
export function findJsonProblem(root: unknown): string | undefined {
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

function parseJsonBody(request: FastifyRequest, text: string): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('invalid_parameter', `the body must be UTF-8 JSON, got charset ${JSON.stringify(charset.slice(0, 40))}`, 415);
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
