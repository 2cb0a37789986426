/**
 * The API shapes of alerts, their runs and cases, and their limits: one declaration each (LKE's Alert, with our
 * extensions). No Node import here (the console reads these types).
 */
import { Type, type Static } from 'typebox';
import { PositiveId, Timestamp } from '../http/schemas.js';
import { GraphEdgeSchema, GraphNodeSchema } from '../graph/graph-schemas.js';
import { SourceKey } from '../sources/schemas.js';

export const MAX_TITLE = 200;
export const MAX_DESCRIPTION = 4000;
export const MAX_QUERIES = 20;
export const MAX_QUERY_NAME = 200;
export const MAX_QUERY_TEXT = 100_000;
export const MAX_COLUMNS = 50;
export const MAX_COLUMN_NAME = 200;
export const COLUMN_TYPES = ['string', 'number'] as const;

export const CASE_STATUSES = ['unconfirmed', 'confirmed', 'dismissed', 'in-progress'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

/** Each action and the status it sets; `comment` records a comment only. */
export const STATUS_OF_ACTION = {
  confirm: 'confirmed',
  dismiss: 'dismissed',
  unconfirm: 'unconfirmed',
  'in-progress': 'in-progress',
} as const satisfies Record<string, CaseStatus>;

// Object.keys types its answer string[]: the cast keeps each action's name in the type (and the route schema's).
export const CASE_ACTIONS = [...(Object.keys(STATUS_OF_ACTION) as (keyof typeof STATUS_OF_ACTION)[]), 'comment'] as const;
export type CaseAction = (typeof CASE_ACTIONS)[number];

export const MAX_COMMENT_LENGTH = 4000;


export { SourceKey };
export const AlertParams = Type.Object({ sourceKey: SourceKey, alertId: PositiveId });
export const CaseParams = Type.Object({ sourceKey: SourceKey, alertId: PositiveId, caseId: PositiveId });

export const AlertColumnSchema = Type.Object({
  type: Type.Enum([...COLUMN_TYPES]),
  columnTitle: Type.String({ minLength: 1, maxLength: MAX_COLUMN_NAME }),
  columnName: Type.String({ minLength: 1, maxLength: MAX_COLUMN_NAME, description: 'a column the queries return' }),
});

const QueryFields = {
  name: Type.String({ minLength: 1, maxLength: MAX_QUERY_NAME }),
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_TEXT }),
  dialect: Type.Optional(Type.Literal('cypher')),
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
  uuid: Type.Optional(Type.String({ maxLength: 100 })),
};

const ProblemSchema = Type.Object({
  source: Type.Enum(['alertQuery', 'alert']),
  queryId: Type.Optional(Type.Integer()),
  error: Type.Object({ key: Type.String(), message: Type.String() }),
  partial: Type.Boolean(),
});

export const AlertRunSchema = Type.Object(
  {
    id: Type.Integer(),
    trigger: Type.Enum(['schedule', 'manual']),
    outcome: Type.Enum(['ok', 'partial', 'failed']),
    startedAt: Timestamp,
    durationMs: Type.Integer(),
    rowsRead: Type.Integer({ description: 'rows the queries answered and the run read: each counts towards maxMatches, a match or not, new or not' }),
    matchesNew: Type.Integer({ description: 'distinct matches found that the alert had not recorded: each recorded once, however many rows found it' }),
    matchesSeen: Type.Integer({ description: 'distinct matches found that the alert had recorded before this run' }),
    casesOpened: Type.Integer({ description: 'cases the new matches opened (a new target)' }),
    eventsEmitted: Type.Integer({ description: 'events recorded for the new matches (newCase, newMatch), each delivered to the webhooks subscribed to it' }),
    problems: Type.Array(ProblemSchema),
  },
  { $id: 'AlertRun', description: 'One run of an alert (ext)' },
);

/** How many cases in each status. */
const CaseCountsSchema = Type.Object({ unconfirmed: Type.Integer(), confirmed: Type.Integer(), dismissed: Type.Integer(), 'in-progress': Type.Integer() });

export const AlertSchema = Type.Object(
  {
    id: Type.Integer(),
    sourceKey: Type.String(),
    title: Type.String(),
    description: Type.String(),
    enabled: Type.Boolean(),
    cron: Type.Union([Type.String(), Type.Null()]),
    columns: Type.Array(AlertColumnSchema),
    queries: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), query: Type.String(), dialect: Type.Literal('cypher'), description: Type.String() })),
    target: Type.Union([Type.String(), Type.Null()]),
    maxMatches: Type.Integer({ description: 'matches read per run at most (ext)' }),
    timeoutMs: Type.Integer({ description: 'time allowed to each run (ext)' }),
    lastRun: Type.Union([Timestamp, Type.Null()]),
    nextRun: Type.Union([Timestamp, Type.Null()]),
    status: Type.Enum(['running', 'idle']),
    lastRunProblem: Type.Array(ProblemSchema),
    runs: Type.Array(AlertRunSchema, { description: 'the last runs, newest first; in the list, the last run only (ext; all of them: GET …/runs)' }),
    caseCounts: Type.Optional(Type.Object(CaseCountsSchema.properties, { description: 'its cases in each status (ext; in the list only)' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Alert' },
);

const AlertFields = {
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
  enabled: Type.Optional(Type.Boolean()),
  cron: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  columns: Type.Optional(Type.Array(AlertColumnSchema, { maxItems: MAX_COLUMNS })),
  target: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  maxMatches: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  timeoutMs: Type.Optional(Type.Union([Type.Integer({ minimum: 1000 }), Type.Null()])),
  // LKE's client sends these; here they are accepted and mean nothing (every signed-in user sees every alert).
  folder: Type.Optional(Type.Integer()),
  caseAttributesQuery: Type.Optional(Type.String({ maxLength: MAX_QUERY_TEXT })),
  sharing: Type.Optional(Type.Enum(['private', 'source', 'groups'])),
  sharedWithGroups: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000 })),
  uuid: Type.Optional(Type.String({ maxLength: 100 })),
};

export const CreateAlertBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: MAX_TITLE }),
  ...AlertFields,
  queries: Type.Optional(Type.Array(Type.Object(QueryFields), { maxItems: MAX_QUERIES })),
});

export const UpdateAlertBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TITLE })),
  ...AlertFields,
  queries: Type.Optional(
    Type.Array(
      Type.Object({
        operation: Type.Optional(Type.Enum(['create', 'update', 'delete'])),
        id: Type.Optional(PositiveId),
        name: Type.Optional(QueryFields.name),
        query: Type.Optional(QueryFields.query),
        dialect: QueryFields.dialect,
        description: QueryFields.description,
        uuid: QueryFields.uuid,
      }),
      { maxItems: MAX_QUERIES * 2 },
    ),
  ),
});

export const UserRef = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });
export const CaseSchema = Type.Object(
  {
    id: Type.Integer(),
    sourceKey: Type.String(),
    alertId: Type.Integer(),
    hash: Type.String(),
    status: Type.Enum([...CASE_STATUSES]),
    statusUpdateDate: Type.Optional(Timestamp),
    user: Type.Optional(UserRef),
    assignedUser: Type.Optional(Type.Object(UserRef.properties, { description: 'who the case is assigned to (absent: no one), as LKE answers it' })),
    nodes: Type.Array(Type.String()),
    edges: Type.Array(Type.String()),
    matchCount: Type.Integer(),
    url: Type.String(),
    columns: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "the column values of the case's newest match, by column name; {} when none (ext; in the list of cases)" })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Case', description: 'A distinct match of an alert, with its status' },
);

/** A page of an alert's cases, with the count of each status over all of them. */
export const CaseListSchema = Type.Object({
  counts: CaseCountsSchema,
  cases: Type.Array(CaseSchema),
});

/** One entry of a case's action log. */
export const CaseActionSchema = Type.Object({
  id: Type.Integer(),
  caseId: Type.Integer(),
  user: Type.Union([UserRef, Type.Null()]),
  action: Type.String(),
  comment: Type.Optional(Type.String()),
  assignedUser: Type.Optional(Type.Union([UserRef, Type.Null()], { description: 'on an `assign` line: who the case was assigned to; null when it was unassigned (or that user is deleted)' })),
  application: Type.Optional(Type.Object({ id: Type.Integer(), name: Type.String() })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const PopulatedCaseSchema = Type.Object({
  ...CaseSchema.properties,
  graph: Type.Optional(Type.Object({ nodes: Type.Array(GraphNodeSchema), edges: Type.Array(GraphEdgeSchema) }, { description: "a page of the target's nodes and edges with their data (graphPage), when the graph answers" })),
  graphPage: Type.Optional(
    Type.Object(
      {
        offset: Type.Integer(),
        limit: Type.Integer(),
        total: Type.Integer({ description: "the target's nodes and edges, all pages together" }),
        nextOffset: Type.Union([Type.Integer(), Type.Null()], { description: "the next page's graphOffset; null after the last" }),
      },
      { description: "which of the target's nodes then edges `graph` holds (ext)" },
    ),
  ),
  graphProblem: Type.Optional(Type.Object({ key: Type.String(), message: Type.String() }, { description: 'why `graph` is missing' })),
  truncatedByAccess: Type.Optional(Type.Boolean({ description: "with `graph`: whether items of the page, or their properties, the caller's groups may not read were left out (ext)" })),
});

export const PreviewBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_TEXT }),
  dialect: Type.Optional(Type.Literal('cypher')),
  columns: Type.Optional(Type.Array(AlertColumnSchema, { maxItems: MAX_COLUMNS })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  target: Type.Optional(Type.String({ maxLength: 200 })),
});

export const PreviewAnswer = Type.Array(
  Type.Object({ nodes: Type.Array(GraphNodeSchema), edges: Type.Array(GraphEdgeSchema), columns: Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()])) }),
);

export const MatchSchema = Type.Object({
  nodes: Type.Array(Type.String()),
  edges: Type.Array(Type.String()),
  columns: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});

// The types of the shapes above, for the server's code and the console (which imports them type-only).
export type AlertColumn = Static<typeof AlertColumnSchema>;
export type RunProblem = Static<typeof ProblemSchema>;
export type AlertRunRecord = Static<typeof AlertRunSchema>;
export type Alert = Static<typeof AlertSchema>;
export type AlertQuery = Alert['queries'][number];
export type CreateAlert = Static<typeof CreateAlertBody>;
export type UpdateAlert = Static<typeof UpdateAlertBody>;
export type Case = Static<typeof CaseSchema>;
export type PopulatedCase = Static<typeof PopulatedCaseSchema>;
export type CaseList = Static<typeof CaseListSchema>;
export type CaseActionEntry = Static<typeof CaseActionSchema>;
export type Preview = Static<typeof PreviewBody>;
export type PreviewRow = Static<typeof PreviewAnswer>[number];
export type CaseMatch = Static<typeof MatchSchema>;
