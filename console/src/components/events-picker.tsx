import { useId } from 'preact/hooks';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, SOURCELESS_EVENT_TYPES, type DataSource, type EventType, type WebhookEvent } from '../types';

const ALL = '*';
export const EVENT_LABELS: Record<EventType, string> = { newCase: 'New case', newMatch: 'New match', caseStatusChange: 'Case status change', webhookDisabled: 'Webhook disabled' };

export const eventKey = (eventType: EventType, sourceKey: string = ALL) => `${eventType}|${sourceKey}`;

/** The checked boxes as the API's `events`. */
export function toEvents(checked: ReadonlySet<string>): WebhookEvent[] {
  return [...checked].map((key) => {
    const [eventType, sourceKey] = key.split('|') as [EventType, string];
    return sourceKey === ALL ? { eventType } : { eventType, sourceKey };
  });
}

/** The API's default: the three case and match events on every data source (not webhookDisabled). */
export const allEvents = () => new Set(DEFAULT_EVENT_TYPES.map((t) => eventKey(t)));

/** A webhook's `events` as checked boxes, for editing. */
export const fromEvents = (events: WebhookEvent[]) => new Set(events.map((e) => eventKey(e.eventType, e.sourceKey)));

/** Events × data sources as a grid of checkboxes; "All data sources" includes sources added later. */
export function EventsPicker({
  sources,
  checked,
  onChange,
  errorId,
}: {
  sources: DataSource[];
  checked: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  errorId?: string | undefined;
}) {
  const toggle = (key: string) => {
    const next = new Set(checked);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    onChange(next);
  };
  const columns = [{ key: ALL, name: 'All data sources' }, ...sources];
  return (
    <table class="picker" aria-describedby={errorId}>
      <thead>
        <tr>
          <th scope="col">Event</th>
          {columns.map((c) => (
            <th scope="col" key={c.key}>
              {c.name}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {EVENT_TYPES.map((eventType) => (
          <tr key={eventType}>
            <th scope="row">
              {EVENT_LABELS[eventType]} <code>{eventType}</code>
            </th>
            {columns.map((c) => {
              // A sourceless event (webhookDisabled) has only the "all data sources" box: the API refuses the others.
              if (c.key !== ALL && SOURCELESS_EVENT_TYPES.includes(eventType)) return <td key={c.key} />;
              const key = eventKey(eventType, c.key);
              const label = `${eventType} on ${c.key === ALL ? 'all data sources' : c.name}`;
              return (
                <td key={c.key}>
                  <input type="checkbox" aria-label={label} checked={checked.has(key)} onChange={() => toggle(key)} />
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** "newCase, newMatch on all data sources; caseStatusChange on Bank". */
export function describeEvents(events: WebhookEvent[], sources: DataSource[]): string {
  const bySource = new Map<string, string[]>();
  for (const e of events) {
    const where = e.sourceKey === undefined ? 'all data sources' : (sources.find((s) => s.key === e.sourceKey)?.name ?? e.sourceKey);
    bySource.set(where, [...(bySource.get(where) ?? []), e.eventType]);
  }
  return [...bySource].map(([where, types]) => `${types.join(', ')} on ${where}`).join('; ');
}

/** The events picker in its labelled fieldset, with the API's message about `events` tied to it (create and edit). */
export function EventsField({
  sources,
  checked,
  onChange,
  error,
}: {
  sources: DataSource[];
  checked: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  error?: string | undefined;
}) {
  const errorId = useId();
  return (
    <fieldset class={error ? 'has-error' : ''}>
      <legend>Events</legend>
      <EventsPicker sources={sources} checked={checked} onChange={onChange} errorId={error ? errorId : undefined} />
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
