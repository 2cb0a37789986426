import { useId } from 'preact/hooks';

/** `2026-11-25T10:00:00.000Z` → the `datetime-local` value of that instant in this browser's zone. */
const toLocalInput = (iso: string | null) => {
  if (!iso || Number.isNaN(Date.parse(iso))) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : '');

/** A date and time in the browser's zone, kept as the ISO instant the API takes. */
export function DateTimeField({ label, value, onChange }: { label: string; value: string; onChange: (iso: string) => void }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="datetime-local" value={toLocalInput(value)} onInput={(e) => onChange(fromLocalInput(e.currentTarget.value))} />
    </div>
  );
}
