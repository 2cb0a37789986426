/**
 * The event payloads of docs/api.md (Events and payloads), rendered once when the event happens and stored as the
 * exact bytes every attempt sends. Each is built as its schema's type (event-schemas.ts) and written through that
 * schema (payload-json.ts), whose property order is the contract's key order.
 */
import type { Static } from 'typebox';
import { CaseStatusChangeEvent, NewCaseEvent, NewMatchEvent, PingEvent, WebhookDisabledEvent, type EventAlert, type EventUser as EventUserSchema, type EventWebhook } from './event-schemas.js';
import { payloadWriter } from './payload-json.js';

/** The alert of an event (`description` `""` when the alert has none). */
export type AlertSummary = Static<typeof EventAlert>;
export type EventUser = Static<typeof EventUserSchema>;
export type DisabledWebhookSnapshot = Static<typeof EventWebhook>;

export interface CaseTargetSnapshot {
  id: number;
  createdAt: Date;
  nodes: string[];
  edges: string[];
  url: string;
}

type CaseStatus = Static<typeof CaseStatusChangeEvent>['data']['case']['status'];

export interface StatusChangeSnapshot {
  id: number;
  createdAt: Date;
  /** The time of the change. */
  updatedAt: Date;
  status: CaseStatus;
  url: string;
}

const writeNewCase = payloadWriter(NewCaseEvent);
const writeNewMatch = payloadWriter(NewMatchEvent);
const writeCaseStatusChange = payloadWriter(CaseStatusChangeEvent);
const writePing = payloadWriter(PingEvent);
const writeWebhookDisabled = payloadWriter(WebhookDisabledEvent);

const alertOf = (alert: AlertSummary): AlertSummary => ({ id: alert.id, title: alert.title, description: alert.description ?? '' });

export function renderNewCase(sourceKey: string, alert: AlertSummary, kase: CaseTargetSnapshot): string {
  const { id, createdAt, nodes, edges, url } = kase;
  return writeNewCase({ eventType: 'newCase', sourceKey, data: { alert: alertOf(alert), case: { id, createdAt: createdAt.toISOString(), target: { nodes, edges }, url } } });
}

export function renderNewMatch(sourceKey: string, alert: AlertSummary, kase: CaseTargetSnapshot & { updatedAt: Date }): string {
  const { id, createdAt, updatedAt, nodes, edges, url } = kase;
  const data = { alert: alertOf(alert), case: { id, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString(), target: { nodes, edges }, url } };
  return writeNewMatch({ eventType: 'newMatch', sourceKey, data });
}

export function renderCaseStatusChange(sourceKey: string, alert: AlertSummary, kase: StatusChangeSnapshot, user: EventUser, comment: string | undefined): string {
  const { id, createdAt, updatedAt, status, url } = kase;
  const data = {
    alert: alertOf(alert),
    case: { id, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString(), status, url },
    user: { id: user.id, username: user.username, email: user.email },
    comment: comment ?? '',
  };
  return writeCaseStatusChange({ eventType: 'caseStatusChange', sourceKey, data });
}

export function renderPing(webhookId: number): string {
  return writePing({ eventType: 'ping', data: { webhookId } });
}

/**
 * A webhook was disabled automatically: told to the other webhooks subscribed to `webhookDisabled`. Its URL goes
 * without query string, fragment or user:password: many receiver URLs are bearer capabilities (a chat or ticketing
 * hook's token in its query), and the other receivers are other parties.
 */
export function renderWebhookDisabled(webhook: DisabledWebhookSnapshot, reason: string, disabledAt: Date): string {
  const data = { webhook: { id: webhook.id, url: shareableUrl(webhook.url), description: webhook.description }, reason, disabledAt: disabledAt.toISOString() };
  return writeWebhookDisabled({ eventType: 'webhookDisabled', data });
}

/** `https://user:pw@hooks.example.com/T0/B1?token=x#y` → `https://hooks.example.com/T0/B1`: where, never the capability. */
export function shareableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '';
  }
}
