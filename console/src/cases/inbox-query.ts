import { CASE_STATUSES, type CaseStatus } from '../types';

// The inbox's filters as its URL spells them, which is also how GET /api/cases takes them: a view is a link to share,
// and the page passes its query on as it is (plus the page size).

export const INBOX_PATH = '/cases';
export const INBOX_PAGE_SIZE = 25;

/** Filters of one value each, by their query name. */
export const DATE_FILTERS = [
  { name: 'createdFrom', label: 'Created from' },
  { name: 'createdTo', label: 'Created until' },
  { name: 'updatedFrom', label: 'Updated from' },
  { name: 'updatedTo', label: 'Updated until' },
] as const;
type DateFilter = (typeof DATE_FILTERS)[number]['name'];

export interface InboxFilters extends Record<DateFilter, string> {
  status: CaseStatus[];
  sourceKey: string;
  alertId: string;
  /** `me`, `none`, a user id, or '' for anyone. */
  assignee: string;
  sort: string;
  direction: string;
  /** Column values by column name: only with an alert (its columns). */
  columns: Record<string, string>;
}

const COLUMN_PREFIX = 'column.';

export function filtersOf(query: URLSearchParams): InboxFilters {
  const columns: Record<string, string> = {};
  for (const [name, value] of query) if (name.startsWith(COLUMN_PREFIX)) columns[name.slice(COLUMN_PREFIX.length)] = value;
  const status = (query.get('status') ?? '').split(',').filter((s): s is CaseStatus => (CASE_STATUSES as readonly string[]).includes(s));
  const one = (name: string) => query.get(name) ?? '';
  return {
    status,
    sourceKey: one('sourceKey'),
    alertId: one('alertId'),
    assignee: one('assignee'),
    createdFrom: one('createdFrom'),
    createdTo: one('createdTo'),
    updatedFrom: one('updatedFrom'),
    updatedTo: one('updatedTo'),
    sort: one('sort'),
    direction: one('direction'),
    columns,
  };
}

/** The inbox's address for these filters, from its first page; empty values left out. */
export function inboxLink(filters: InboxFilters): string {
  const query = new URLSearchParams();
  if (filters.status.length > 0) query.set('status', filters.status.join(','));
  for (const name of ['sourceKey', 'alertId', 'assignee', ...DATE_FILTERS.map((f) => f.name), 'sort', 'direction'] as const) {
    const value = filters[name].trim();
    if (value) query.set(name, value);
  }
  // The API takes column filters with an alert only: its columns are what they are about.
  if (filters.alertId) for (const [name, value] of Object.entries(filters.columns)) if (value.trim()) query.set(`${COLUMN_PREFIX}${name}`, value.trim());
  return query.size > 0 ? `${INBOX_PATH}?${query}` : INBOX_PATH;
}

/** GET /api/cases for the page's query: its filters and cursor as they are, the page size added. */
export function inboxApiPath(query: URLSearchParams): string {
  const api = new URLSearchParams();
  for (const [name, value] of query) if (value && (!name.startsWith(COLUMN_PREFIX) || query.has('alertId'))) api.set(name, value);
  api.set('limit', String(INBOX_PAGE_SIZE));
  return `/api/cases?${api}`;
}

/** Whether the view is narrowed by anything (sorting and paging narrow nothing). */
export const isFiltered = (query: URLSearchParams) => [...query.keys()].some((k) => !['cursor', 'sort', 'direction'].includes(k));
