/**
 * `alert-webhooks/verify`: what a receiver needs, and nothing of the service: the signature checks (Node's crypto
 * only) and the types of the payloads it is sent (types only: importing this loads no schema library).
 *
 *   import { verifyStandardWebhook, type WebhookEvent } from 'alert-webhooks/verify';
 */
import type { Static } from 'typebox';
import type { CaseStatusChangeEvent as CaseStatusChangeSchema, NewCaseEvent as NewCaseSchema, NewMatchEvent as NewMatchSchema, PingEvent as PingSchema, WebhookDisabledEvent as WebhookDisabledSchema } from './outbox/event-schemas.js';

export { verifyPayloadHmac, verifyStandardWebhook, type AcceptedSecrets, type StandardWebhookHeaders } from './delivery/verify.js';

/** An alert matched something it had not matched before: a new case. */
export type NewCaseEvent = Static<typeof NewCaseSchema>;
/** An alert matched the target of an existing case again. */
export type NewMatchEvent = Static<typeof NewMatchSchema>;
/** A user changed a case's status. */
export type CaseStatusChangeEvent = Static<typeof CaseStatusChangeSchema>;
/** Another webhook was disabled automatically (sent to the webhooks that subscribe to it). */
export type WebhookDisabledEvent = Static<typeof WebhookDisabledSchema>;
/** Sent by the ping operation to check a receiver. */
export type PingEvent = Static<typeof PingSchema>;
/** Any payload a receiver may be sent; `eventType` tells them apart. */
export type WebhookEvent = NewCaseEvent | NewMatchEvent | CaseStatusChangeEvent | WebhookDisabledEvent | PingEvent;
