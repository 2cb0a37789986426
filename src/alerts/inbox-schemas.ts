/**
 * The API shapes of the analysts' case inbox (issue 40): the page of cases across alerts and sources, the bulk status
 * change, assignment (LKE's `assignCases`, `bulkAssignCases`, `getAlertUsers`), and their limits. Declared once; the
 * console imports the types.
 */
import { Type, type Static } from 'typebox';
import { PositiveId, Timestamp } from '../http/schemas.js';
import { CASE_STATUSES, SourceKey, UserRef } from './schemas.js';

export const INBOX_SORTS = ['updatedAt', 'createdAt', 'id'] as const;
export type InboxSort = (typeof INBOX_SORTS)[number];
export const SORT_DIRECTIONS = ['desc', 'asc'] as const;
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

export const DEFAULT_INBOX_PAGE = 50;
export const MAX_INBOX_PAGE = 200;
/** Column filters of one request: an alert has at most MAX_COLUMNS columns, a filter names one of them. */
export const MAX_COLUMN_FILTERS = 10;
export const MAX_COLUMN_VALUE = 1000;
export const COLUMN_FILTER_PREFIX = 'column.';
/** Cases one bulk status change acts on: each is a transaction and a caseStatusChange of its own. */
export const MAX_BULK_CASES = 100;
/** Cases one assignment call changes, all alerts together: one transaction. */
export const MAX_ASSIGNED_CASES = 1000;
export const MAX_ASSIGNMENT_ALERTS = 100;

const Instant = (what: string) => Type.Optional(Type.String({ maxLength: 64, description: `ISO 8601: ${what}` }));

/**
 * GET /api/cases. `column.<name>=<value>` (patternProperties) filters on a column of the alert given by `alertId`.
 * Parameters other than these answer 400: a misspelt filter would otherwise widen the answer without a word.
 */
export const InboxQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ maxLength: 100, description: `comma-separated statuses, any of ${CASE_STATUSES.join(', ')}` })),
    sourceKey: Type.Optional(SourceKey),
    alertId: Type.Optional(PositiveId),
    assignee: Type.Optional(Type.String({ pattern: '^(me|none|[1-9][0-9]{0,9})$', description: '`me`, `none` (unassigned) or a user id' })),
    createdFrom: Instant('created at or after'),
    createdTo: Instant('created before'),
    updatedFrom: Instant('updated at or after'),
    updatedTo: Instant('updated before'),
    sort: Type.Optional(Type.Enum([...INBOX_SORTS], { description: 'updatedAt (the default), createdAt or id' })),
    direction: Type.Optional(Type.Enum([...SORT_DIRECTIONS], { description: 'desc (the default) or asc' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INBOX_PAGE, default: DEFAULT_INBOX_PAGE })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'the nextCursor of the previous page, with the same sort' })),
  },
  { patternProperties: { '^column\\.': Type.String({ maxLength: MAX_COLUMN_VALUE }) } },
);
export type InboxQueryText = Static<typeof InboxQuery>;

export const InboxCaseSchema = Type.Object(
  {
    id: Type.Integer(),
    sourceKey: Type.String(),
    alertId: Type.Integer(),
    alertTitle: Type.String(),
    status: Type.Enum([...CASE_STATUSES]),
    statusUpdateDate: Type.Optional(Timestamp),
    user: Type.Optional(Type.Object(UserRef.properties, { description: 'who last changed the status' })),
    assignedUser: Type.Optional(Type.Object(UserRef.properties, { description: 'who the case is assigned to (absent: no one)' })),
    matchCount: Type.Integer(),
    url: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    columns: Type.Record(Type.String(), Type.Unknown(), { description: "the column values of the case's newest match, by column name; {} when none" }),
  },
  { $id: 'InboxCase', description: 'A case in the inbox: the Case without its node and edge ids, with its alert (ext)' },
);

export const InboxPageSchema = Type.Object(
  {
    items: Type.Array(InboxCaseSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` for the next page; null on the last page' }),
  },
  { $id: 'InboxPage', description: 'One page of the case inbox (ext)' },
);

/** The case ids of a bulk action (its `action` and `comment` are a case action's: bulk-case-actions.ts). */
export const BulkCaseIds = Type.Array(PositiveId, { minItems: 1, maxItems: MAX_BULK_CASES, uniqueItems: true });

export const BULK_OUTCOMES = ['done', 'redundant', 'not_found'] as const;
export const BulkCaseActionAnswer = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        caseId: Type.Integer(),
        outcome: Type.Enum([...BULK_OUTCOMES], { description: 'done; redundant: it already had that status; not_found: no such case, or not one the caller may read' }),
      }),
      { description: 'one per case, in the order given' },
    ),
  },
  { $id: 'BulkCaseActionAnswer' },
);

const CaseIds = Type.Array(PositiveId, { minItems: 1, maxItems: MAX_ASSIGNED_CASES, uniqueItems: true });
const Assignee = (what: string) => Type.Union([PositiveId, Type.Null()], { description: `${what}: a user who may read the alert; null unassigns (ext)` });

/** LKE's assignCases: POST /api/:sourceKey/alerts/:alertId/cases/assignments. */
export const AssignCasesBody = Type.Object({ caseIds: CaseIds, userId: Assignee('who to assign the cases to') });

/** LKE's bulkAssignCases: POST /api/:sourceKey/alerts/cases/assignments. */
export const BulkAssignCasesBody = Type.Object({
  casesPerAlert: Type.Array(Type.Object({ alertId: PositiveId, caseIds: CaseIds }), { minItems: 1, maxItems: MAX_ASSIGNMENT_ALERTS }),
  assignedUserId: Assignee('who to assign the cases to'),
});

/** LKE's IAlertUserInfo: a user who may read the alert (and so be assigned its cases). */
export const AlertUserSchema = Type.Object(
  { ...UserRef.properties, hasAssignedCases: Type.Boolean({ description: 'whether some of the alert\'s cases are assigned to them' }) },
  { $id: 'AlertUser' },
);

export type InboxCase = Static<typeof InboxCaseSchema>;
export type InboxPage = Static<typeof InboxPageSchema>;
export type BulkCaseActionResult = Static<typeof BulkCaseActionAnswer>['results'][number];
export type AlertUser = Static<typeof AlertUserSchema>;
