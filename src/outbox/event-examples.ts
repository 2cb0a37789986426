import { renderCaseStatusChange, renderNewCase, renderNewMatch, renderPing, renderWebhookDisabled } from './events.js';
import type { EventType } from './schemas.js';

/**
 * The example payload of each event type, rendered by the same functions as real events: the one source of the
 * examples in docs/api.md (Events and payloads; a test compares them), in the OpenAPI document's `webhooks`, and of
 * what "Send an example" (POST /api/admin/webhooks/:webhookId/example) sends to a receiver under test.
 */

/** Every payload a receiver may be sent: the events a webhook subscribes to, and the ping. */
export type ExampleEventType = EventType | 'ping';

const SOURCE_KEY = 'b4675b85';
const ALERT = { id: 3, title: 'Shared phone numbers', description: 'Two clients share a phone' };
const CASE = {
  id: 17,
  createdAt: new Date('2026-11-22T10:04:05.123Z'),
  nodes: ['1', '2', '3'],
  edges: ['4', '5'],
  url: 'https://lke.example.com/alerts/3/case/17',
};

const EXAMPLES: Record<ExampleEventType, () => string> = {
  newCase: () => renderNewCase(SOURCE_KEY, ALERT, CASE),
  newMatch: () => renderNewMatch(SOURCE_KEY, ALERT, { ...CASE, updatedAt: new Date('2026-11-22T11:00:00.000Z') }),
  caseStatusChange: () =>
    renderCaseStatusChange(
      SOURCE_KEY,
      ALERT,
      { id: CASE.id, createdAt: CASE.createdAt, updatedAt: new Date('2026-11-22T11:30:00.000Z'), status: 'confirmed', url: CASE.url },
      { id: 2, username: 'ana', email: 'ana@example.com' },
      'Checked with the bank',
    ),
  webhookDisabled: () =>
    renderWebhookDisabled(
      { id: 7, url: 'https://receiver.example.com/hooks', description: 'Fraud team' },
      'automatically after 5 days of failed deliveries',
      new Date('2026-11-27T10:04:05.123Z'),
    ),
  ping: () => renderPing(7),
};

/** The example payload of `eventType`, as the exact bytes (compact JSON) a receiver is sent. */
export function examplePayload(eventType: ExampleEventType): string {
  return EXAMPLES[eventType]();
}
