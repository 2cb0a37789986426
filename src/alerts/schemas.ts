/** The API shapes of alerts, their runs and cases: one declaration each (LKE's Alert, with our extensions). */
import { Type } from 'typebox';
import { PositiveId, Timestamp } from '../http/schemas.js';
import { GraphEdgeSchema, GraphNodeSchema, SourceKey } from '../sources/schemas.js';
import { COLUMN_TYPES, MAX_COLUMN_NAME, MAX_COLUMNS, MAX_DESCRIPTION, MAX_QUERIES, MAX_QUERY_NAME, MAX_QUERY_TEXT, MAX_TITLE } from './alerts.js';
import { CASE_STATUSES } from './cases.js';

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
    rowsRead: Type.Integer(),
    matchesNew: Type.Integer(),
    matchesSeen: Type.Integer(),
    casesOpened: Type.Integer(),
    eventsEmitted: Type.Integer(),
    problems: Type.Array(ProblemSchema),
  },
  { $id: 'AlertRun', description: 'One run of an alert (ext)' },
);

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
    runs: Type.Array(AlertRunSchema, { description: 'the last runs, newest first (ext; all of them: GET …/runs)' }),
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

const UserRef = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });
export const CaseSchema = Type.Object(
  {
    id: Type.Integer(),
    sourceKey: Type.String(),
    alertId: Type.Integer(),
    hash: Type.String(),
    status: Type.Enum([...CASE_STATUSES]),
    statusUpdateDate: Type.Optional(Timestamp),
    user: Type.Optional(UserRef),
    nodes: Type.Array(Type.String()),
    edges: Type.Array(Type.String()),
    matchCount: Type.Integer(),
    url: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Case', description: 'A distinct match of an alert, with its status' },
);

export const PopulatedCaseSchema = Type.Object({
  ...CaseSchema.properties,
  graph: Type.Optional(Type.Object({ nodes: Type.Array(GraphNodeSchema), edges: Type.Array(GraphEdgeSchema) }, { description: "the target's nodes and edges with their data, when the graph answers" })),
  graphProblem: Type.Optional(Type.Object({ key: Type.String(), message: Type.String() }, { description: 'why `graph` is missing' })),
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
