import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

// Bodies are JSON and keep their types: `"secret": 123` is an error, not the string "123".
// Query strings and path parameters arrive as text and are coerced to the schema's types.
const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: true, allErrors: false, strict: false });
const textAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: false, strict: false });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;

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
    case 'additionalProperties':
      return `${where} ${fieldName(error.instancePath, String(params.additionalProperty))} is not allowed`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  const first = errors[0];
  return new Error(first ? describeValidationError(first, dataVar) : `${dataVar} is invalid`);
}
