import type { ComponentChildren, InputHTMLAttributes, TargetedEvent } from 'preact';
import { useId } from 'preact/hooks';

interface FieldProps {
  label: string;
  value: string;
  onInput: (e: TargetedEvent<HTMLInputElement, Event>) => void;
  type?: 'text' | 'password' | 'email' | 'url';
  name?: string;
  placeholder?: string;
  autoComplete?: string;
  required?: boolean;
  spellcheck?: boolean;
  inputMode?: 'numeric' | 'text';
  /** The API's message for this field, shown beside it and read with it (aria-describedby). */
  error?: string | undefined;
  /** A plain reading of the value, or a hint. */
  hint?: ComponentChildren;
  children?: ComponentChildren;
}

/** A labelled input with its hint and its error, both tied to it for screen readers. */
export function Field({ label, error, hint, children, ...input }: FieldProps) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' has-error' : ''}`}>
      <label for={id}>{label}</label>
      <div class="field-row">
        {/* Preact types each input `type` separately; the props above are valid for all four. */}
        <input id={id} aria-invalid={error ? true : undefined} aria-describedby={described || undefined} {...(input as InputHTMLAttributes<HTMLInputElement>)} />
        {children}
      </div>
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

interface SelectProps {
  label: string;
  value: string;
  onChange: (e: TargetedEvent<HTMLSelectElement, Event>) => void;
  error?: string | undefined;
  options: readonly { value: string; label: string }[];
}

export function SelectField({ label, error, options, ...select }: SelectProps) {
  const id = useId();
  return (
    <div class={`field${error ? ' has-error' : ''}`}>
      <label for={id}>{label}</label>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : undefined} {...select}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The API's rules for a new secret (docs/api.md, Webhooks), as the secret fields say them. */
export const SECRET_RULES = '16 characters or more, at least 6 different, no tab or line break';

/** A webhook secret as typed: never completed or spell-checked by the browser; the rules and the API's refusal beside it. */
export function SecretField({ hint, ...props }: Pick<FieldProps, 'value' | 'error' | 'onInput' | 'children'> & { hint: string }) {
  return <Field label="Secret" autoComplete="off" spellcheck={false} hint={`${hint} ${SECRET_RULES}.`} {...props} />;
}
