import { Type, type TSchema } from 'typebox';

/**
 * The shapes of the event payloads (docs/api.md, Events and payloads): what a receiver is sent. Declared once: the
 * OpenAPI document's `webhooks` section shows them, and src/outbox/events.ts renders each payload through its schema
 * (payload-json.ts), which fixes the JSON key order the contract freezes: the order of the properties below.
 */
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

// The case statuses of alerts/cases.ts (CASE_STATUSES), repeated rather than imported: alerts/ imports outbox/.
// test/http/openapi-validate.test.ts checks the two lists agree.
export const EVENT_CASE_STATUSES = ['unconfirmed', 'confirmed', 'dismissed', 'in-progress'] as const;

export const EventAlert = Type.Object({ id: Type.Integer(), title: Type.String(), description: Type.String({ description: '"" when the alert has none' }) });
const EventTarget = Type.Object({ nodes: Type.Array(Type.String()), edges: Type.Array(Type.String()) });
export const EventUser = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });
export const EventWebhook = Type.Object({ id: Type.Integer(), url: Type.String(), description: Type.String() });
/** The first fields of the case of every event about one. */
const CaseOpened = { id: Type.Integer(), createdAt: Timestamp };

export const NewCaseEvent = Type.Object(
  {
    eventType: Type.Literal('newCase'),
    sourceKey: Type.String(),
    data: Type.Object({ alert: EventAlert, case: Type.Object({ ...CaseOpened, target: EventTarget, url: Type.String() }) }),
  },
  { $id: 'NewCaseEvent', description: 'An alert matched something it had not matched before: a new case' },
);

export const NewMatchEvent = Type.Object(
  {
    eventType: Type.Literal('newMatch'),
    sourceKey: Type.String(),
    data: Type.Object({ alert: EventAlert, case: Type.Object({ ...CaseOpened, updatedAt: Timestamp, target: EventTarget, url: Type.String() }) }),
  },
  { $id: 'NewMatchEvent', description: 'An alert matched the target of an existing case again' },
);

export const CaseStatusChangeEvent = Type.Object(
  {
    eventType: Type.Literal('caseStatusChange'),
    sourceKey: Type.String(),
    data: Type.Object({
      alert: EventAlert,
      case: Type.Object({ ...CaseOpened, updatedAt: Timestamp, status: Type.Enum([...EVENT_CASE_STATUSES]), url: Type.String() }),
      user: EventUser,
      comment: Type.String({ description: '"" when none was given' }),
    }),
  },
  { $id: 'CaseStatusChangeEvent', description: 'A user confirmed, dismissed, unconfirmed or started work on a case' },
);

export const WebhookDisabledEvent = Type.Object(
  {
    eventType: Type.Literal('webhookDisabled'),
    data: Type.Object({
      webhook: EventWebhook,
      reason: Type.String(),
      disabledAt: Timestamp,
    }),
  },
  { $id: 'WebhookDisabledEvent', description: 'Another webhook was disabled automatically after failing for autoDisableAfterMs' },
);

export const PingEvent = Type.Object(
  { eventType: Type.Literal('ping'), data: Type.Object({ webhookId: Type.Integer() }) },
  { $id: 'PingEvent', description: 'Sent by POST /api/admin/webhooks/:webhookId/ping to check a receiver' },
);

/** Each event type a receiver may be sent, with its payload shape. */
export const EVENT_PAYLOADS: Readonly<Record<string, TSchema>> = {
  newCase: NewCaseEvent,
  newMatch: NewMatchEvent,
  caseStatusChange: CaseStatusChangeEvent,
  webhookDisabled: WebhookDisabledEvent,
  ping: PingEvent,
};
