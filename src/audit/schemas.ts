/**
 * The audit log's API shapes (GET /api/admin/audit), declared once, in a file of no Node import: the route answers
 * them, the types are derived from them, and the console's audit page imports the types.
 */
import { Type, type Static } from 'typebox';
import { MAX_INT4, Timestamp } from '../http/schemas.js';

/** What the audit log records about: the things whose changes an Admin may have to account for. */
export const AUDIT_TARGETS = ['alert', 'case', 'group', 'accessRights', 'accessRightsSettings'] as const;
export type AuditTarget = (typeof AUDIT_TARGETS)[number];

export const DEFAULT_AUDIT_PAGE_SIZE = 50;
export const MAX_AUDIT_PAGE_SIZE = 200;
/** An action is `<target>.<verb>` (`alert.update`, `case.status`): letters only, so a filter is never a pattern. */
export const AUDIT_ACTION_PATTERN = '^[A-Za-z]{1,40}\\.[A-Za-z]{1,40}$';
/** A target's id as recorded: an id, a data source key, a group's id… */
const MAX_TARGET_ID_LENGTH = 128;
/** The longest `from`/`to` bound, as text. */
const MAX_INSTANT_LENGTH = 64;
/**
 * The contract's rule for data source keys (sources/schemas.ts, SOURCE_KEY_PATTERN), written again rather than imported:
 * the sources reach the access rights, whose changes are recorded here, and folders never import each other in a circle.
 */
const SourceKey = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'a data source key' });
/** Where a page ends: the id of its last entry (a bigint, within what a JavaScript number holds exactly). */
export const AUDIT_CURSOR_PATTERN = '^[0-9]{1,16}$';

/** The filters of GET /api/admin/audit, each optional; all given must hold. */
export const AuditQuery = Type.Object({
  targetType: Type.Optional(Type.Enum([...AUDIT_TARGETS], { description: 'entries about this kind of thing' })),
  targetId: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TARGET_ID_LENGTH, description: 'entries about this one (an alert id, a case id, a group id…); with targetType' })),
  userId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT4, description: 'entries of what this user did (through an API key too)' })),
  sourceKey: Type.Optional(SourceKey),
  action: Type.Optional(Type.String({ maxLength: 81, pattern: AUDIT_ACTION_PATTERN, description: 'one action, such as alert.update or case.status' })),
  from: Type.Optional(Type.String({ maxLength: MAX_INSTANT_LENGTH, description: 'ISO 8601: recorded at or after this instant' })),
  to: Type.Optional(Type.String({ maxLength: MAX_INSTANT_LENGTH, description: 'ISO 8601: recorded before this instant' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE_SIZE, default: DEFAULT_AUDIT_PAGE_SIZE })),
  cursor: Type.Optional(Type.String({ maxLength: 16, pattern: AUDIT_CURSOR_PATTERN, description: 'the nextCursor of the previous page of the same search' })),
});
export type AuditFilters = Static<typeof AuditQuery>;

export const AuditEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    user: Type.Union([Type.Object({ id: Type.Integer(), username: Type.String() }), Type.Null()], {
      description: 'who acted, as they were named then; null for the service itself',
    }),
    application: Type.Optional(Type.Object({ id: Type.Integer(), name: Type.String() }, { description: "the API key's application, when a key acted for the user" })),
    action: Type.String({ description: '<target>.<verb>: alert.create, alert.update, alert.delete, alert.run, case.status, case.comment, case.assign, group.…, accessRights.…' }),
    targetType: Type.Enum([...AUDIT_TARGETS]),
    targetId: Type.String(),
    sourceKey: Type.Optional(Type.String()),
    before: Type.Optional(Type.Unknown({ description: 'the target as it was before the change (absent for a creation)' })),
    after: Type.Optional(Type.Unknown({ description: 'the target as it was after the change (absent for a deletion)' })),
  },
  { $id: 'AuditEntry', description: 'One change to an alert, a case, a group or access rights: who, when, and what it was before and after' },
);
export type AuditRecord = Static<typeof AuditEntrySchema>;

export const AuditPageSchema = Type.Object(
  {
    items: Type.Array(AuditEntrySchema, { description: 'newest first' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor`, with the same filters, for the next page; null on the last page' }),
  },
  { $id: 'AuditPage', description: 'One page of the audit log' },
);
export type AuditPage = Static<typeof AuditPageSchema>;
