import { Fragment } from 'preact';
import { useId, useState } from 'preact/hooks';
import { ApiError, messageOf, patch, post } from '../api';
import { Field } from '../components/field';
import { Notice } from '../components/notice';
import { describeCron } from '../cron';
import { formatValue } from '../format';
import { nextRuns } from '../cron-next';
import type { Alert, AlertColumn, Preview, PreviewRow } from '../types';
import { CypherEditor } from './cypher-editor';

interface QueryDraft {
  key: number;
  /** Absent for a query added in this form. */
  id?: number;
  name: string;
  query: string;
}
type ColumnDraft = AlertColumn & { key: number };

interface Draft {
  title: string;
  description: string;
  enabled: boolean;
  cron: string;
  target: string;
  maxMatches: string;
  timeoutMs: string;
  queries: QueryDraft[];
  columns: ColumnDraft[];
}

let nextKey = 1;
const blankQuery = (): QueryDraft => ({ key: nextKey++, name: 'main', query: '' });

function draftOf(alert: Alert | undefined): Draft {
  if (!alert) return { title: '', description: '', enabled: true, cron: '0 * * * *', target: '', maxMatches: '', timeoutMs: '', queries: [blankQuery()], columns: [] };
  return {
    title: alert.title,
    description: alert.description,
    enabled: alert.enabled,
    cron: alert.cron ?? '',
    target: alert.target ?? '',
    maxMatches: String(alert.maxMatches),
    timeoutMs: String(alert.timeoutMs),
    queries: alert.queries.map((q) => ({ key: nextKey++, id: q.id, name: q.name, query: q.query })),
    columns: alert.columns.map((c) => ({ ...c, key: nextKey++ })),
  };
}

/** An integer as a number; anything else as typed, for the API to refuse by name; empty as `empty`. */
const integer = <E,>(text: string, empty: E): number | string | E => (text.trim() === '' ? empty : /^\d+$/.test(text.trim()) ? Number(text.trim()) : text);

const TOP_FIELDS = ['title', 'description', 'cron', 'target', 'maxMatches', 'timeoutMs', 'queries', 'columns'];

/**
 * Where the API's error goes in the form, from its `field`: `queries[1].query` beside the second query,
 * `columns[0].columnName` beside the first column, `cron` under the CRON; anything else above the Save button. The
 * form sends its queries in the order it shows them, so the API's index is the form's.
 */
function placeOf(err: unknown): string {
  const field = err instanceof ApiError ? err.field : undefined;
  if (!field) return 'form';
  const query = /^queries\[(\d+)\](?:\.(name|query))?/.exec(field);
  if (query) return `queries[${query[1]}].${query[2] ?? 'query'}`;
  const column = /^columns\[(\d+)\](?:\.(columnTitle|columnName|type))?/.exec(field);
  if (column) return `columns[${column[1]}].${column[2] ?? 'columnName'}`;
  return TOP_FIELDS.includes(field) ? field : 'form';
}

/** The definition of an alert, new or saved: what it asks, when, what it keeps; with a preview of each query. */
export function AlertForm({ sourceKey, alert, onSaved }: { sourceKey: string; alert?: Alert; onSaved: (alert: Alert) => void }) {
  const [draft, setDraft] = useState(() => draftOf(alert));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  // Whether the errors shown are a save's (then "Not saved" says so), not a preview's.
  const [saveFailed, setSaveFailed] = useState(false);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => {
    setSaved(false);
    setDraft((d) => ({ ...d, [name]: value }));
  };
  const setQuery = (key: number, change: Partial<QueryDraft>) => set('queries', draft.queries.map((q) => (q.key === key ? { ...q, ...change } : q)));
  const setColumn = (key: number, change: Partial<ColumnDraft>) => set('columns', draft.columns.map((c) => (c.key === key ? { ...c, ...change } : c)));
  const columns = draft.columns.map(({ type, columnTitle, columnName }) => ({ type, columnTitle, columnName }));

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setSaved(false);
    setSaveFailed(false);
    const common = { title: draft.title, description: draft.description, cron: draft.cron.trim() || null, target: draft.target.trim() || null, columns };
    try {
      let answer: Alert;
      if (!alert) {
        const limits = { maxMatches: integer(draft.maxMatches, undefined), timeoutMs: integer(draft.timeoutMs, undefined) };
        answer = await post<Alert>(`/api/admin/${encodeURIComponent(sourceKey)}/alerts`, {
          ...common,
          enabled: draft.enabled,
          ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
          queries: draft.queries.map((q) => ({ name: q.name, query: q.query, dialect: 'cypher' })),
        });
      } else {
        // LKE's operations: the saved queries kept (in the form's order), then the new ones, then the removed ones.
        const kept = draft.queries.filter((q) => q.id !== undefined).map((q) => ({ operation: 'update', id: q.id, name: q.name, query: q.query }));
        const created = draft.queries.filter((q) => q.id === undefined).map((q) => ({ operation: 'create', name: q.name, query: q.query, dialect: 'cypher' }));
        const removed = alert.queries.filter((q) => !draft.queries.some((d) => d.id === q.id)).map((q) => ({ operation: 'delete', id: q.id }));
        answer = await patch<Alert>(`/api/admin/${encodeURIComponent(sourceKey)}/alerts/${alert.id}`, {
          ...common,
          maxMatches: integer(draft.maxMatches, null),
          timeoutMs: integer(draft.timeoutMs, null),
          queries: [...kept, ...created, ...removed],
        });
        setDraft(draftOf(answer));
      }
      setSaved(true);
      onSaved(answer);
    } catch (err) {
      setErrors({ [placeOf(err)]: messageOf(err) });
      setSaveFailed(true);
    } finally {
      setBusy(false);
    }
  };

  const misplaced = errors.form;
  return (
    <form class="card alert-form" onSubmit={(e) => void save(e)} noValidate aria-label="Alert definition">
      <div class="settings-grid">
        <Field label="Title" value={draft.title} onInput={(e) => set('title', e.currentTarget.value)} error={errors.title} />
        <Field
          label="CRON"
          value={draft.cron}
          spellcheck={false}
          onInput={(e) => set('cron', e.currentTarget.value)}
          error={errors.cron}
          hint={<CronHint expression={draft.cron} />}
        />
      </div>
      <div class="field">
        <label for="alert-description">Description</label>
        <textarea id="alert-description" rows={2} value={draft.description} onInput={(e) => set('description', e.currentTarget.value)} />
        {errors.description ? <p class="field-error">{errors.description}</p> : null}
      </div>
      {!alert ? (
        <div class="field checkbox">
          <input id="alert-enabled" type="checkbox" checked={draft.enabled} onChange={(e) => set('enabled', e.currentTarget.checked)} />
          <label for="alert-enabled">Enabled</label>
          <p class="hint">Runs on its CRON once saved; a disabled alert runs only by hand.</p>
        </div>
      ) : null}

      <h2>Queries</h2>
      {errors.queries ? <p class="field-error">{errors.queries}</p> : null}
      {draft.queries.map((q, i) => (
        <QueryField
          key={q.key}
          index={i}
          draft={q}
          sourceKey={sourceKey}
          preview={{ columns, target: draft.target.trim() || undefined }}
          errors={errors}
          onPreviewed={(place, message = '') => {
            setSaveFailed(false);
            setErrors(place === undefined ? {} : { [place === 'query' ? `queries[${i}].query` : place]: message });
          }}
          onChange={(change) => setQuery(q.key, change)}
          onRemove={draft.queries.length > 1 ? () => set('queries', draft.queries.filter((d) => d.key !== q.key)) : undefined}
        />
      ))}
      <button type="button" class="secondary" onClick={() => set('queries', [...draft.queries, { ...blankQuery(), name: `query ${draft.queries.length + 1}` }])}>
        Add a query
      </button>

      <h2>What a match keeps</h2>
      <div class="settings-grid">
        <Field
          label="Target"
          value={draft.target}
          spellcheck={false}
          placeholder="p"
          onInput={(e) => set('target', e.currentTarget.value)}
          error={errors.target}
          hint="The returned variable whose nodes and edges name a case: matches with the same target are one case. Empty: the whole match."
        />
        <div class="form-row">
          <Field label="Most matches a run" inputMode="numeric" value={draft.maxMatches} onInput={(e) => set('maxMatches', e.currentTarget.value)} error={errors.maxMatches} hint="Empty: the service's limit." />
          <Field label="Time-out (ms)" inputMode="numeric" value={draft.timeoutMs} onInput={(e) => set('timeoutMs', e.currentTarget.value)} error={errors.timeoutMs} hint="The whole run's; empty: the service's limit." />
        </div>
      </div>
      <ColumnsField
        columns={draft.columns}
        errors={errors}
        onChange={setColumn}
        onAdd={() => set('columns', [...draft.columns, { key: nextKey++, type: 'string', columnTitle: '', columnName: '' }])}
        onRemove={(key) => set('columns', draft.columns.filter((c) => c.key !== key))}
      />

      {misplaced ? <Notice kind="error">Not saved: {misplaced}</Notice> : null}
      {saveFailed && !misplaced && Object.keys(errors).length ? <Notice kind="error">Not saved: see the message beside the field.</Notice> : null}
      {saved ? <Notice kind="success">Alert saved.</Notice> : null}
      <button type="submit" disabled={busy}>
        {busy ? 'Checking the queries…' : alert ? 'Save alert' : 'Create alert'}
      </button>
    </form>
  );
}

/** The CRON in words and its next three times, as typed. */
function CronHint({ expression }: { expression: string }) {
  if (!expression.trim()) return <>Empty: runs only when run by hand.</>;
  const reading = nextRuns(expression);
  if ('error' in reading) return <>Not a CRON the service takes: {reading.error}.</>;
  const words = describeCron(expression);
  return (
    <>
      {words ? `Runs ${words}. ` : ''}Next: <span class="next-runs">{reading.times.map((t) => t.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })).join(' · ')}</span>
    </>
  );
}

interface QueryFieldProps {
  index: number;
  draft: QueryDraft;
  sourceKey: string;
  preview: Omit<Preview, 'query'>;
  errors: Record<string, string>;
  /** After a preview: no place when it ran, else where its error goes (`query`: this query's editor). */
  onPreviewed: (place: string | undefined, message?: string) => void;
  onChange: (change: Partial<QueryDraft>) => void;
  onRemove: (() => void) | undefined;
}

/** One query: its name, its Cypher, and Preview: the rows it finds now, through alertPreview, recording nothing. */
function QueryField({ index, draft, sourceKey, preview, errors, onPreviewed, onChange, onRemove }: QueryFieldProps) {
  const id = useId();
  const [rows, setRows] = useState<PreviewRow[]>();
  const [busy, setBusy] = useState(false);
  const queryError = errors[`queries[${index}].query`];
  const n = index + 1;

  const run = async () => {
    setBusy(true);
    setRows(undefined);
    try {
      setRows(await post<PreviewRow[]>(`/api/${encodeURIComponent(sourceKey)}/graph/alertPreview`, { ...preview, query: draft.query, dialect: 'cypher', limit: 20 }));
      onPreviewed(undefined);
    } catch (err) {
      // The preview's `query` is this query; its target and columns are the form's.
      const place = placeOf(err);
      onPreviewed(place === 'form' ? 'query' : place, messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <fieldset class={`query${queryError ? ' has-error' : ''}`}>
      <legend>Query {n}</legend>
      <div class="form-row">
        <Field label={`Name of query ${n}`} value={draft.name} onInput={(e) => onChange({ name: e.currentTarget.value })} error={errors[`queries[${index}].name`]} />
      </div>
      <div class="field">
        <span class="label" id={`${id}-label`}>
          Cypher of query {n}
        </span>
        <CypherEditor value={draft.query} onChange={(query) => onChange({ query })} label={`Cypher of query ${n}`} error={queryError} />
        {queryError ? (
          <p class="field-error" id={`${id}-error`}>
            {queryError}
          </p>
        ) : null}
      </div>
      <div class="inline-action">
        <button type="button" class="secondary" disabled={busy || !draft.query.trim()} onClick={() => void run()}>
          {busy ? 'Running…' : `Preview query ${n}`}
        </button>
        {onRemove ? (
          <button type="button" class="danger small" onClick={onRemove}>
            Remove query {n}
          </button>
        ) : null}
      </div>
      {rows ? <PreviewTable rows={rows} columns={preview.columns ?? []} label={`Preview of query ${n}`} /> : null}
    </fieldset>
  );
}

/** What the query found: each row a match, with its nodes, edges and column values. */
function PreviewTable({ rows, columns, label }: { rows: PreviewRow[]; columns: AlertColumn[]; label: string }) {
  if (rows.length === 0) return <Notice kind="info">{label}: no row. The query runs, and finds nothing in the graph now.</Notice>;
  return (
    <div class="preview">
      <p class="muted">
        {label}: {rows.length === 20 ? 'the first 20 rows' : `${rows.length} row${rows.length === 1 ? '' : 's'}`}, recorded nowhere.
      </p>
      <table class="data" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Row</th>
            <th scope="col">Nodes</th>
            <th scope="col">Edges</th>
            {columns.map((c) => (
              <th key={c.columnName} scope="col">
                {c.columnTitle || c.columnName}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              <td class="num">{i + 1}</td>
              <td>
                {row.nodes.map((node) => (
                  <Fragment key={node.id}>
                    <code class="chip">{node.id}</code>{' '}
                  </Fragment>
                ))}
              </td>
              <td>
                {row.edges.map((edge) => (
                  <Fragment key={edge.id}>
                    <code class="chip" title={edge.id}>
                      {edge.data.type}
                    </code>{' '}
                  </Fragment>
                ))}
              </td>
              {row.columns.map((value, j) => (
                <td key={j}>{formatValue(value)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface ColumnsFieldProps {
  columns: ColumnDraft[];
  errors: Record<string, string>;
  onChange: (key: number, change: Partial<ColumnDraft>) => void;
  onAdd: () => void;
  onRemove: (key: number) => void;
}

/** The values picked from each row by name, shown as the case's columns. */
function ColumnsField({ columns, errors, onChange, onAdd, onRemove }: ColumnsFieldProps) {
  return (
    <fieldset class={errors.columns ? 'has-error' : ''}>
      <legend>Columns</legend>
      <p class="hint">Values the queries return (by name), kept with each match and shown with its case.</p>
      {errors.columns ? <p class="field-error">{errors.columns}</p> : null}
      {columns.map((c, i) => (
        <div class="form-row" key={c.key}>
          <Field label={`Column ${i + 1} title`} value={c.columnTitle} onInput={(e) => onChange(c.key, { columnTitle: e.currentTarget.value })} error={errors[`columns[${i}].columnTitle`]} />
          <Field label={`Column ${i + 1} returned as`} value={c.columnName} spellcheck={false} onInput={(e) => onChange(c.key, { columnName: e.currentTarget.value })} error={errors[`columns[${i}].columnName`]} />
          <div class="field">
            <label for={`column-${c.key}-type`}>Column {i + 1} type</label>
            <select id={`column-${c.key}-type`} value={c.type} onChange={(e) => onChange(c.key, { type: e.currentTarget.value as AlertColumn['type'] })}>
              <option value="string">text</option>
              <option value="number">number</option>
            </select>
          </div>
          <button type="button" class="danger small column-remove" onClick={() => onRemove(c.key)}>
            Remove column {i + 1}
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={onAdd}>
        Add a column
      </button>
    </fieldset>
  );
}
