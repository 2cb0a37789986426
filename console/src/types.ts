// The shapes the public API answers (docs/api.md), as the console reads them. Those the server declares in a
// domain's schemas.ts are imported from there, types only (nothing of the server is bundled); the rest are still
// written here until their domain's schemas can be read without the server's Node code.
import type { Application, Group, User } from '../../src/auth/schemas';
import type { WebhookSettings } from '../../src/settings/schemas';

export type { Application, Group, User, WebhookSettings };

export const EVENT_TYPES = ['newCase', 'newMatch', 'caseStatusChange', 'webhookDisabled'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** Events of no data source: subscribed to on "all data sources" only (the API refuses a sourceKey on them). */
export const SOURCELESS_EVENT_TYPES: readonly EventType[] = ['webhookDisabled'];
/** What the API subscribes a new webhook to when `events` is left out (never webhookDisabled: it is asked for). */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = ['newCase', 'newMatch', 'caseStatusChange'];

export interface WebhookEvent {
  eventType: EventType;
  sourceKey?: string;
}

export interface Webhook {
  id: number;
  url: string;
  description: string;
  events: WebhookEvent[];
  enabled: boolean;
  disabledAt: string | null;
  /** `"by <username>"` or `"automatically after …"`; null while enabled. */
  disabledReason: string | null;
  /** Since when its attempts have all failed (the failure streak); null when the last one succeeded. */
  failingSince: string | null;
  /** Until when the secret before the last rotation still signs; null when no overlap runs. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Only in the read of one webhook. */
  deliveryCounts?: { pending: number; sent: number; failed: number };
}

/** The answer of POST /api/admin/webhooks/:id/secret; `secret` only when the service generated it. */
export interface SecretRotation {
  webhookId: number;
  secret?: string;
  previousSecretExpiresAt: string | null;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed';

export interface Attempt {
  attemptedAt: string;
  durationMs: number;
  responseStatus?: number;
  error?: string;
  responseBody?: string;
}

export interface Delivery {
  id: number;
  webhookId: number;
  payload: { eventType: string; sourceKey?: string; data: unknown };
  sentDate: string | null;
  error?: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  responseStatus?: number;
  createdAt: string;
  updatedAt: string;
  /** Only in the read of one delivery. */
  attemptLog?: Attempt[];
}

export interface Page<T> {
  totalCount: number;
  items: T[];
}

export interface DataSource {
  key: string;
  name: string;
  connected: boolean;
}

export interface Alert {
  id: number;
  sourceKey: string;
  title: string;
  description: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export type CaseStatus = 'unconfirmed' | 'confirmed' | 'dismissed' | 'in-progress';

export interface Case {
  id: number;
  sourceKey: string;
  alertId: number;
  status: CaseStatus;
  statusUpdateDate?: string;
  user?: { id: number; username: string; email: string };
  nodes: string[];
  edges: string[];
  matchCount: number;
  url: string;
  createdAt: string;
  updatedAt: string;
}

export interface CaseAction {
  id: number;
  caseId: number;
  user: { id: number; username: string; email: string };
  action: 'confirm' | 'dismiss' | 'unconfirm' | 'in-progress' | 'comment';
  comment?: string;
  application?: { id: number; name: string };
  createdAt: string;
}


/** The two built-in groups (docs/api.md): the API has no route listing groups. */
export const GROUPS = [
  { id: 1, name: 'Admin' },
  { id: 2, name: 'Analyst' },
] as const;

export const isAdmin = (user: User) => user.groups.some((g) => g.id === 1 || g.name === 'Admin');
