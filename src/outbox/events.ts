/**
 * The event payloads of docs/api.md (Events and payloads), rendered once when the event happens and stored as the exact bytes every
 * attempt sends. Key order is the contract's: JSON.stringify keeps the insertion order of the literals below.
 */

export interface AlertSummary {
  id: number;
  title: string;
  /** `""` when the alert has none. */
  description: string;
}

export interface CaseTargetSnapshot {
  id: number;
  createdAt: Date;
  nodes: readonly string[];
  edges: readonly string[];
  url: string;
}

export interface EventUser {
  id: number;
  username: string;
  email: string;
}

const alertOf = (alert: AlertSummary) => ({ id: alert.id, title: alert.title, description: alert.description ?? '' });

export function renderNewCase(sourceKey: string, alert: AlertSummary, kase: CaseTargetSnapshot): string {
  return JSON.stringify({
    eventType: 'newCase',
    sourceKey,
    data: {
      alert: alertOf(alert),
      case: { id: kase.id, createdAt: kase.createdAt.toISOString(), target: { nodes: kase.nodes, edges: kase.edges }, url: kase.url },
    },
  });
}

export function renderNewMatch(sourceKey: string, alert: AlertSummary, kase: CaseTargetSnapshot & { updatedAt: Date }): string {
  return JSON.stringify({
    eventType: 'newMatch',
    sourceKey,
    data: {
      alert: alertOf(alert),
      case: {
        id: kase.id,
        createdAt: kase.createdAt.toISOString(),
        updatedAt: kase.updatedAt.toISOString(),
        target: { nodes: kase.nodes, edges: kase.edges },
        url: kase.url,
      },
    },
  });
}

export interface StatusChangeSnapshot {
  id: number;
  createdAt: Date;
  /** The time of the change. */
  updatedAt: Date;
  status: string;
  url: string;
}

export function renderCaseStatusChange(
  sourceKey: string,
  alert: AlertSummary,
  kase: StatusChangeSnapshot,
  user: EventUser,
  comment: string | undefined,
): string {
  return JSON.stringify({
    eventType: 'caseStatusChange',
    sourceKey,
    data: {
      alert: alertOf(alert),
      case: { id: kase.id, createdAt: kase.createdAt.toISOString(), updatedAt: kase.updatedAt.toISOString(), status: kase.status, url: kase.url },
      user: { id: user.id, username: user.username, email: user.email },
      comment: comment ?? '',
    },
  });
}

export function renderPing(webhookId: number): string {
  return JSON.stringify({ eventType: 'ping', data: { webhookId } });
}

export interface DisabledWebhookSnapshot {
  id: number;
  url: string;
  description: string;
}

/**
 * A webhook was disabled automatically: told to the other webhooks subscribed to `webhookDisabled`. Its URL goes
 * without query string, fragment or user:password: many receiver URLs are bearer capabilities (a chat or ticketing
 * hook's token in its query), and the other receivers are other parties.
 */
export function renderWebhookDisabled(webhook: DisabledWebhookSnapshot, reason: string, disabledAt: Date): string {
  return JSON.stringify({
    eventType: 'webhookDisabled',
    data: { webhook: { id: webhook.id, url: shareableUrl(webhook.url), description: webhook.description }, reason, disabledAt: disabledAt.toISOString() },
  });
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
