import type { SwaggerOptions } from '@fastify/swagger';
import type { RouteAccess } from './auth/authenticate.js';
import { SESSION_COOKIE } from './auth/sessions.js';
import { EVENT_PAYLOAD_MARK } from './http/schemas.js';
import { examplePayload, type ExampleEventType } from './outbox/event-examples.js';
import { EVENT_PAYLOADS } from './outbox/event-schemas.js';
import { VERSION } from './version.js';

/**
 * The @fastify/swagger options that make /api/openapi.json a document client generators take as it is:
 * - named component schemas: each schema with an `$id` (Error, User, Webhook, Delivery, …) becomes
 *   `#/components/schemas/<$id>` and a `$ref` wherever it is used, so generators name their types. This is done
 *   here, on the document's copy of each route schema, rather than with `app.addSchema` and `$ref`s in the routes:
 *   the routes keep the TypeBox objects their types are inferred from, and the validators never see a `$ref`;
 * - `security` derived from each route's declared access (`config.access`), the one source the guard also reads;
 * - the answers every route can give without saying so: 500 everywhere, 413 and 415 where a body is taken;
 * - the event payloads a receiver is sent, in the OpenAPI 3.1 `webhooks` section, with the signature headers.
 */

const SCHEMAS = '#/components/schemas/';
const SECURED = [{ session: [] }, { apiKey: [] }];

/** Answers no route lists itself, because the framework or the error handler gives them. */
const IMPLICIT_ERRORS: Record<number, string> = {
  401: 'Not signed in, or a bad API key (unauthorized): any route answers this to an Authorization header that is not a valid API key',
  413: 'The body is larger than the body limit (payload_too_large)',
  415: 'The body is not application/json (invalid_parameter)',
  500: 'An unexpected failure (bug); the message says nothing of the cause, the log does',
};
const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'Bad input: the message names the field and the rule (invalid_parameter)',
  401: 'Not signed in, or a bad API key (unauthorized)',
  403: 'Not in the Admin group, or webhooks are disabled (forbidden, feature_disabled)',
  404: 'What the path names does not exist (not_found)',
  409: 'Conflicts with what exists (already_exists, redundant_action)',
  429: 'Too many failed sign-ins from this address or for this user (too_many_requests)',
  ...IMPLICIT_ERRORS,
};

type Json = Record<string, unknown>;

/** A copy of `node` where each schema with an `$id` is a `$ref`, the schema itself collected into `named`. */
function withNamedSchemas(node: unknown, named: Map<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => withNamedSchemas(item, named));
  if (node === null || typeof node !== 'object') return node;
  // Object.entries: own enumerable string keys, so TypeBox's `~kind` marks stay behind.
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) if (key !== '$id') copy[key] = withNamedSchemas(value, named);
  if ((node as Json)[EVENT_PAYLOAD_MARK] === true) {
    delete copy[EVENT_PAYLOAD_MARK];
    return { ...copy, ...eventPayloadSchema(named) };
  }
  const id = (node as Json).$id;
  if (typeof id !== 'string') return copy;
  if (!named.has(id)) named.set(id, copy);
  return { $ref: `${SCHEMAS}${id}` };
}

/** One of the event payloads, told apart by `eventType`, for a delivery's `payload`. */
function eventPayloadSchema(named: Map<string, unknown>): Json {
  const mapping = Object.fromEntries(Object.keys(EVENT_PAYLOADS).map((eventType) => [eventType, withNamedSchemas(EVENT_PAYLOADS[eventType], named)]));
  return {
    oneOf: Object.values(mapping),
    discriminator: { propertyName: 'eventType', mapping: Object.fromEntries(Object.entries(mapping).map(([type, ref]) => [type, (ref as Json).$ref])) },
  };
}

/** The error answers of a route schema: the shared Error component, with what each status means. */
function describedErrors(response: Json, hasBody: boolean): Json {
  const implicit = Object.keys(IMPLICIT_ERRORS).map(Number).filter((status) => status === 401 || status === 500 || hasBody);
  const all: Json = { ...response };
  for (const status of implicit) all[status] ??= { $ref: `${SCHEMAS}Error` };
  for (const [status, schema] of Object.entries(all)) {
    const ref = (schema as Json).$ref;
    if (ref === `${SCHEMAS}Error`) all[status] = { $ref: ref, description: ERROR_DESCRIPTIONS[status] ?? 'An error' };
  }
  return all;
}

function signatureHeader(name: string, description: string, example?: string): Json {
  return { name, in: 'header', required: true, description, schema: { type: 'string' }, ...(example ? { example } : {}) };
}

/** The `webhooks` section: one POST per event type, its payload and the Standard Webhooks signature headers. */
function eventWebhooks(named: Map<string, unknown>): Json {
  const parameters = [
    signatureHeader('X-Payload-HMAC', 'Lowercase hex of HMAC-SHA256 of the exact body bytes, keyed by the secret\'s UTF-8 bytes (the new secret during a rotation)'),
    signatureHeader('User-Agent', 'alert-webhooks/<version>', `alert-webhooks/${VERSION}`),
    signatureHeader('webhook-id', 'The delivery id: the same on every attempt of one delivery (deduplicate on it)'),
    signatureHeader('webhook-timestamp', 'Unix seconds of this attempt'),
    signatureHeader(
      'webhook-signature',
      'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per secret during a rotation (Standard Webhooks)',
    ),
  ];
  return Object.fromEntries(
    Object.entries(EVENT_PAYLOADS).map(([eventType, payload]) => [
      eventType,
      {
        post: {
          operationId: `${eventType}Event`,
          summary: `The ${eventType} event`,
          description: (payload as Json).description,
          parameters,
          // How a receiver knows the sender: the signatures, keyed by the webhook's secret (docs/receivers.md).
          security: [{ payloadHmac: [] }, { standardWebhooks: [] }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: withNamedSchemas(payload, named), example: JSON.parse(examplePayload(eventType as ExampleEventType)) } },
          },
          responses: {
            '2XX': { description: 'Received: the delivery is sent' },
            default: { description: 'Not received: the delivery is retried on its schedule, then failed' },
          },
        },
      },
    ]),
  );
}

export function openapiOptions(): SwaggerOptions {
  const named = new Map<string, unknown>();
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Alert Webhooks',
        version: VERSION,
        description: 'Alerts, cases and signed webhook deliveries',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      // Relative: the paths are served by whichever host served this document (PUBLIC_BASE_URL is not known here).
      servers: [{ url: '/', description: 'This service, where the document was fetched from' }],
      components: {
        securitySchemes: {
          payloadHmac: { type: 'apiKey', in: 'header', name: 'X-Payload-HMAC', description: 'On the events: the receiver checks the HMAC-SHA256 of the body under the webhook secret' },
          standardWebhooks: { type: 'apiKey', in: 'header', name: 'webhook-signature', description: 'On the events: the Standard Webhooks signature of id, timestamp and body under the webhook secret' },
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The session cookie set by POST /api/auth/login' },
          apiKey: { type: 'http', scheme: 'basic', description: 'An API key: Authorization: Basic base64(<user email>:<API key>)' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      if (!schema || schema.hide) return { schema, url };
      const copy = withNamedSchemas(schema, named) as Json;
      const access = route.config?.access as RouteAccess | undefined;
      copy.security = access === 'public' ? [] : SECURED;
      copy.response = describedErrors((copy.response ?? {}) as Json, schema.body !== undefined);
      return { schema: copy as typeof schema, url };
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      const webhooks = eventWebhooks(named);
      const schemas = { ...openapiObject.components?.schemas, ...Object.fromEntries([...named].sort(([a], [b]) => a.localeCompare(b))) };
      return { ...openapiObject, components: { ...openapiObject.components, schemas }, webhooks } as typeof openapiObject;
    },
  };
}
