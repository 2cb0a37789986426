import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWERED_AS, ERROR_STATUS } from '../../src/errors.js';
import { CASE_STATUSES } from '../../src/alerts/schemas.js';
import { EVENT_CASE_STATUSES, EVENT_PAYLOADS } from '../../src/outbox/event-schemas.js';
import { renderCaseStatusChange, renderNewCase, renderNewMatch, renderPing, renderWebhookDisabled } from '../../src/outbox/events.js';
import { startTestService, type TestService } from '../support/test-service.js';

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

interface Schema {
  properties: Record<string, { enum?: string[]; const?: string }>;
}

interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> };
  webhooks: Record<string, { post: { parameters: { in: string; name: string }[]; security: unknown[]; requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
}

/** The document a client generator is given: valid OpenAPI 3.1, every operation named, secured and answered. */
describe('the OpenAPI document, for client generators', () => {
  let t: TestService;
  let document: Document;
  let operations: { where: string; path: string; operation: Operation }[];

  beforeAll(async () => {
    t = await startTestService();
    const answer = await t.anonymous.get('/api/openapi.json');
    expect(answer.status).toBe(200);
    document = answer.body;
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, path, operation })),
    );
  });
  afterAll(async () => t?.close());

  it('is valid OpenAPI 3.1 for an OpenAPI validator', async () => {
    expect(document.openapi).toBe('3.1.0');
    // The validator dereferences in place: it is given a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as unknown as Parameters<typeof SwaggerParser.validate>[0])).resolves.toBeDefined();
  });

  it('names every operation once, in camelCase', () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    const ids = operations.map(({ where, operation }) => {
      expect(operation.operationId, `${where} has an operationId`).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      return operation.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('asks for the session cookie or an API key on every route but the public ones, as each route declares', () => {
    const accessOf = new Map(t.app.declaredRoutes.map((r) => [`${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`, r.access]));
    // The two a caller uses; the other two describe how a receiver checks the events (the webhooks section).
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'payloadHmac', 'session', 'standardWebhooks']);
    for (const { where, operation } of operations) {
      const access = accessOf.get(where);
      expect(access, `${where} is a registered route`).toBeDefined();
      if (access === 'public') expect(operation.security, `${where} is public`).toEqual([]);
      else expect(operation.security, `${where} needs a principal`).toEqual([{ session: [] }, { apiKey: [] }]);
    }
    expect(operations.find((o) => o.where === 'POST /api/auth/login')?.operation.security).toEqual([]);
    expect(operations.find((o) => o.where === 'GET /api/auth/me')?.operation.security).toHaveLength(2);
  });

  it('names the main shapes, and gives the error key as the enum of the catalogue', () => {
    const schemas = document.components.schemas;
    for (const name of ['Error', 'User', 'Group', 'Application', 'Webhook', 'WebhookDetails', 'Delivery', 'Alert', 'Case', 'Settings']) {
      expect(schemas[name], `component ${name}`).toBeDefined();
    }
    expect([...schemas.Error!.properties.key!.enum!].sort()).toEqual(Object.keys(ERROR_STATUS).filter((key) => !(key in ANSWERED_AS)).sort());
    const createWebhook = operations.find((o) => o.operation.operationId === 'createWebhook')!.operation;
    expect(createWebhook.responses['201']).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/Webhook' } } } });
  });

  it('documents 500 on every route, and 413 and 415 on every route that takes a body', () => {
    const error = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    for (const { where, operation } of operations) {
      expect(operation.responses['500'], `${where}: 500`).toMatchObject(error);
      if (operation.requestBody) {
        expect(operation.responses['413'], `${where}: 413`).toMatchObject(error);
        expect(operation.responses['415'], `${where}: 415`).toMatchObject(error);
      }
    }
  });

  it('has the five events a receiver is sent in the webhooks section, with their payloads and signature headers', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual(['caseStatusChange', 'newCase', 'newMatch', 'ping', 'webhookDisabled']);
    for (const [eventType, item] of Object.entries(document.webhooks)) {
      const headers = item.post.parameters.filter((p) => p.in === 'header').map((p) => p.name);
      expect(headers.sort()).toEqual(['User-Agent', 'X-Payload-HMAC', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
      expect(item.post.security).toEqual([{ payloadHmac: [] }, { standardWebhooks: [] }]);
      const ref = item.post.requestBody.content['application/json']!.schema.$ref;
      expect(document.components.schemas[ref.replace('#/components/schemas/', '')]?.properties.eventType?.const).toBe(eventType);
    }
  });

  it('gives a caseStatusChange event the case statuses the API has', () => {
    expect([...EVENT_CASE_STATUSES]).toEqual([...CASE_STATUSES]);
    expect(document.components.schemas.CaseStatusChangeEvent).toBeDefined();
  });

  it('describes the payloads events.ts really renders', () => {
    const ajv = new Ajv({ strict: false });
    const alert = { id: 1, title: 'A', description: '' };
    const at = new Date('2030-01-01T00:00:00.000Z');
    const kase = { id: 2, createdAt: at, updatedAt: at, nodes: ['n'], edges: [], url: 'http://127.0.0.1/case/2', status: 'confirmed' as const };
    const rendered: Record<string, string> = {
      newCase: renderNewCase('src', alert, kase),
      newMatch: renderNewMatch('src', alert, kase),
      caseStatusChange: renderCaseStatusChange('src', alert, kase, { id: 3, username: 'u', email: 'u@example.com' }, undefined),
      webhookDisabled: renderWebhookDisabled({ id: 4, url: 'http://127.0.0.1/hook', description: '' }, 'failing', at),
      ping: renderPing(4),
    };
    expect(Object.keys(rendered).sort()).toEqual(Object.keys(EVENT_PAYLOADS).sort());
    for (const [eventType, payload] of Object.entries(rendered)) {
      const validate = ajv.compile(EVENT_PAYLOADS[eventType]!);
      expect(validate(JSON.parse(payload)), `${eventType}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});
