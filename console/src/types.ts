// The shapes the public API answers (docs/api.md), as the console reads them: every one is the server's own, derived
// from its TypeBox schema (src/*/schemas.ts) and imported type-only, so nothing of the server is bundled and a
// change of shape on the server fails the console's typecheck. The few lists the console needs at run time are
// written here, checked against the server's types by `every` below.
import type { AlertRunRecord, Alert, CaseAction as CaseActionName, AlertColumn, AlertQuery, CaseActionEntry, CaseList, CaseMatch, CaseStatus, Case, PopulatedCase, Preview, PreviewRow } from '../../src/alerts/schemas';
import type { AlertUser as AssignableUser, BulkCaseActionAnswer, InboxCase, InboxPage } from '../../src/alerts/inbox-schemas';
import type { Application, Group, User } from '../../src/auth/schemas';
import type { CaseStatusChangeEvent, NewCaseEvent, NewMatchEvent, PingEvent, WebhookDisabledEvent } from '../../src/outbox/event-schemas';
import type { AttemptLogEntry, Delivery as DeliveryAnswer, DeliveryHealth, DeliveryStatus, EventType, LKE_EVENT_TYPES, DeliverySearchFilters, DeliverySearchPage, HealthOverTime, HealthRange, HealthBucket } from '../../src/outbox/schemas';
import type { Settings, WebhookSettings } from '../../src/settings/schemas';
import type { GraphEdge, GraphNode } from '../../src/graph/graph-schemas';
import type { DataSourceAnswer, DataSourceSummary } from '../../src/sources/schemas';
import type { SecretRotation, Webhook, WebhookDetails, WebhookEvent, WebhookListItem } from '../../src/webhooks/schemas';
import type { Static } from 'typebox';
import type { AccessRight, Action, ItemLevel } from '../../src/access/access-rights';
import type { AuditPage, AuditRecord as AuditEntry, AuditTarget } from '../../src/audit/schemas';
import type { DataSourceGroup as SourceGroup } from '../../src/access/schemas';

export type {
  AccessRight,
  Action,
  AssignableUser,
  AuditEntry,
  AuditPage,
  AuditTarget,
  InboxCase,
  InboxPage,
  ItemLevel,
  SourceGroup,
  Alert,
  AlertColumn,
  AlertQuery,
  AlertRunRecord as AlertRun,
  Application,
  AttemptLogEntry as Attempt,
  Case,
  CaseList,
  CaseMatch,
  CaseStatus,
  DataSourceAnswer as AdminDataSource,
  DeliveryHealth,
  DeliverySearchFilters,
  DeliverySearchPage,
  DeliveryStatus,
  EventType,
  HealthBucket,
  HealthOverTime,
  HealthRange,
  GraphEdge,
  GraphNode,
  Group,
  PopulatedCase,
  Preview,
  PreviewRow,
  SecretRotation,
  Settings,
  User,
  Webhook,
  WebhookDetails,
  WebhookEvent,
  WebhookListItem,
  WebhookSettings,
};

/** A data source as every signed-in user lists it (GET /api/dataSources). */
export type DataSource = DataSourceSummary;

/** Every payload a receiver may be sent (the OpenAPI document's webhooks). */
export type EventPayload = Static<typeof NewCaseEvent | typeof NewMatchEvent | typeof CaseStatusChangeEvent | typeof WebhookDisabledEvent | typeof PingEvent>;

/** A delivery, its payload read as the event it is (the server keeps it as any JSON: it is the exact body sent). */
export type Delivery = Omit<DeliveryAnswer, 'payload'> & { payload: EventPayload };

/** One entry of a case's action log: a status change, a comment or an assignment (`assignedUser`, null: unassigned). */
export type CaseAction = CaseActionEntry;

/** What the inbox does to many cases at once (POST /api/cases/action), and what it came to for each. */
export type BulkActionAnswer = Static<typeof BulkCaseActionAnswer>;
/** The case actions (POST …/action, and at once POST /api/cases/action). */
export type BulkAction = CaseActionName;

/** A paged list (`totalCount` counts every item, `items` the page's). */
export interface Page<T> {
  totalCount: number;
  items: T[];
}

/**
 * `list`, checked by the compiler to hold every member of the union `T` (and nothing else): a member added on the
 * server fails the console's typecheck here until the console lists it.
 */
const every =
  <T extends string>() =>
  <const L extends readonly T[]>(list: L & ([Exclude<T, L[number]>] extends [never] ? unknown : { missing: Exclude<T, L[number]> })): L =>
    list;

export const EVENT_TYPES = every<EventType>()(['newCase', 'newMatch', 'caseStatusChange', 'webhookDisabled']);
/** Events of no data source (their payload has no `sourceKey`): subscribed to on "all data sources" only. */
export const SOURCELESS_EVENT_TYPES: readonly EventType[] = every<Extract<Exclude<EventPayload, { sourceKey: string }>['eventType'], EventType>>()(['webhookDisabled']);
/** What the API subscribes a new webhook to when `events` is left out (never webhookDisabled: it is asked for). */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = every<(typeof LKE_EVENT_TYPES)[number]>()(['newCase', 'newMatch', 'caseStatusChange']);
export const CASE_STATUSES = every<CaseStatus>()(['unconfirmed', 'in-progress', 'confirmed', 'dismissed']);
export const DELIVERY_STATUSES = every<DeliveryStatus>()(['pending', 'sent', 'failed']);
export const ITEM_LEVELS = every<ItemLevel>()(['none', 'read', 'edit', 'write']);
export const AUDIT_TARGETS = every<AuditTarget>()(['alert', 'case', 'group', 'accessRights', 'accessRightsSettings']);
/** LKE's actions a custom group may be given (src/access/access-rights.ts, ACTIONS), in its order. */
export const ACTIONS = every<Action>()([
  'admin.connect',
  'admin.index',
  'admin.users',
  'admin.schema',
  'admin.schema.read',
  'admin.alerts',
  'manageAlert',
  'admin.report',
  'admin.styles',
  'admin.spaces',
  'runQuery',
  'rawReadQuery',
  'rawWriteQuery',
  'manageQuery',
  'runCustomAction',
  'writeCustomAction',
  'manageCustomAction',
  'applyNodeGrouping',
  'createNodeGrouping',
  'manageNodeGrouping',
]);

/** The two built-in groups (docs/api.md), on every data source; the custom ones are listed per source (groups/). */
export const GROUPS = [
  { id: 1, name: 'Admin' },
  { id: 2, name: 'Analyst' },
] as const satisfies readonly Pick<Group, 'id' | 'name'>[];

/** In the built-in Admin group (id 1): a custom group may be named "Admin" too, and gives no more for it. */
export const isAdmin = (user: User) => user.groups.some((g) => g.id === GROUPS[0].id);
