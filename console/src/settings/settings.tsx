import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { fieldOf, messageOf, post } from '../api';
import { Field } from '../components/field';
import { Notice } from '../components/notice';
import { PageTitle } from '../components/page';
import { describeCron } from '../cron';
import { formatDuration } from '../format';
import type { Settings, WebhookSettings } from '../types';
import { useApi } from '../use-api';

const FIELDS = ['enabled', 'deliveryFrequency', 'cleanupFrequency', 'deliveryRetentionDelayMs', 'failedDeliveryRetentionDelayMs', 'alertRunRetentionDelayMs', 'auditRetentionDelayMs', 'requestTimeoutMs', 'retryScheduleMs', 'autoDisableAfterMs'] as const satisfies readonly (keyof WebhookSettings)[];

/**
 * What the form holds, derived from the server's settings type: a switch for a boolean, text as typed for the rest, so
 * a bad value reaches the API and comes back with the API's message. A new setting fails to compile here until the
 * form shows it.
 */
type Form = { [K in keyof WebhookSettings]: WebhookSettings[K] extends boolean ? boolean : string };

const toForm = (s: WebhookSettings): Form => ({
  ...s,
  deliveryRetentionDelayMs: String(s.deliveryRetentionDelayMs),
  failedDeliveryRetentionDelayMs: String(s.failedDeliveryRetentionDelayMs),
  alertRunRetentionDelayMs: String(s.alertRunRetentionDelayMs),
  auditRetentionDelayMs: String(s.auditRetentionDelayMs),
  requestTimeoutMs: String(s.requestTimeoutMs),
  retryScheduleMs: s.retryScheduleMs.join(', '),
  autoDisableAfterMs: String(s.autoDisableAfterMs),
});

/** An integer as a number; anything else as typed, for the API to refuse by name. */
const integer = (text: string): number | string => (/^-?\d+$/.test(text.trim()) ? Number(text.trim()) : text);

const fromForm = (f: Form) => ({
  enabled: f.enabled,
  deliveryFrequency: f.deliveryFrequency.trim(),
  cleanupFrequency: f.cleanupFrequency.trim(),
  deliveryRetentionDelayMs: integer(f.deliveryRetentionDelayMs),
  failedDeliveryRetentionDelayMs: integer(f.failedDeliveryRetentionDelayMs),
  alertRunRetentionDelayMs: integer(f.alertRunRetentionDelayMs),
  auditRetentionDelayMs: integer(f.auditRetentionDelayMs),
  requestTimeoutMs: integer(f.requestTimeoutMs),
  retryScheduleMs: f.retryScheduleMs.trim() === '' ? [] : f.retryScheduleMs.split(',').map(integer),
  autoDisableAfterMs: integer(f.autoDisableAfterMs),
});

const cronReading = (expression: string) => {
  const words = describeCron(expression);
  return words ? `Runs ${words}.` : `Runs on the schedule ${expression.trim() || '(empty)'}.`;
};

// `immediate` is ours, not a CRON: deliveries go out as soon as the change that records them is saved.
const deliveryReading = (expression: string) =>
  expression.trim() === 'immediate' ? 'Sends each delivery as soon as its event is recorded (and sweeps for any missed, every second unless DELIVERY_SWEEP_MS says otherwise).' : `${cronReading(expression)} Or "immediate": as soon as each event is recorded.`;

const msReading = (text: string) => (/^\d+$/.test(text.trim()) ? formatDuration(Number(text)) : 'a whole number of milliseconds');

const autoDisableReading = (text: string) =>
  text.trim() === '0'
    ? 'Never: a failing webhook stays enabled.'
    : /^\d+$/.test(text.trim())
      ? `Disables a webhook whose deliveries have all failed for ${formatDuration(Number(text))} (0 = never).`
      : 'A whole number of milliseconds; 0 = never.';

const scheduleReading = (text: string) => {
  const steps = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (steps.length === 0) return 'No retry: one attempt only.';
  if (!steps.every((s) => /^\d+$/.test(s))) return 'Whole numbers of milliseconds, separated by commas.';
  return `Waits ${steps.map((s) => formatDuration(Number(s))).join(', ')}, then gives up (${steps.length + 1} attempts in all).`;
};

/** The webhooks section of the configuration: GET /api/config, saved whole by POST /api/config. */
export function SettingsPage() {
  const [form, setForm] = useState<Form>();
  const [errors, setErrors] = useState<Partial<Record<keyof Form | 'form', string>>>({});
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const enabledId = useId();

  const config = useApi<Settings>('/api/config');
  // Changes typed so far, and how many there were when the last save's reload was asked: the reload's answer may land
  // after the user went on typing (a slow service), and must not put back the saved values over what they typed.
  const edits = useRef(0);
  const editsAtReload = useRef(0);
  // The form starts from what the service holds, and again after each save (what it saved, as it reads it back),
  // unless it was edited since that save.
  useEffect(() => {
    if (!config.data?.webhooks) return;
    if (form && edits.current !== editsAtReload.current) return;
    setForm(toForm(config.data.webhooks));
  }, [config.data]);

  if (!form) {
    const problem = config.error?.message ?? (config.data && !config.data.webhooks ? 'The configuration answered no webhooks section.' : undefined);
    return (
      <>
        <PageTitle title="Settings">Settings</PageTitle>
        {problem ? <Notice kind="error">{problem}</Notice> : <p class="loading">Loading…</p>}
      </>
    );
  }

  const edit = (next: Form) => {
    edits.current++;
    setSaved(false);
    setForm(next);
  };
  const set = (name: keyof Form) => (e: Event) => edit({ ...form, [name]: (e.currentTarget as HTMLInputElement).value });
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setSaved(false);
    const editsAtSave = edits.current;
    try {
      // One call for the whole section: the API checks every option first, so a bad one saves nothing.
      await post('/api/config', { path: 'webhooks', configuration: fromForm(form) });
      setSaved(true);
      // Edits made while the save was under way are not in it: they, too, are kept over the reload.
      editsAtReload.current = editsAtSave;
      config.reload();
    } catch (err) {
      const message = messageOf(err);
      setErrors({ [fieldOf(err, FIELDS) ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageTitle title="Settings">Settings</PageTitle>
      <form class="card settings" onSubmit={(e) => void save(e)} noValidate>
        <h2>Webhooks</h2>
        <p class="muted">Shared by every process of the service; they take effect without a restart.</p>
        <div class={`field checkbox${errors.enabled ? ' has-error' : ''}`}>
          <input
            id={enabledId}
            type="checkbox"
            checked={form.enabled}
            onChange={(e) => edit({ ...form, enabled: e.currentTarget.checked })}
          />
          <label for={enabledId}>Webhooks enabled</label>
          <p class="hint">Off: no new deliveries, nothing sent, and webhook operations are refused.</p>
          {errors.enabled ? <p class="field-error">{errors.enabled}</p> : null}
        </div>
        <div class="settings-grid">
          <Field label="Delivery frequency" spellcheck={false} value={form.deliveryFrequency} onInput={set('deliveryFrequency')} error={errors.deliveryFrequency} hint={deliveryReading(form.deliveryFrequency)} />
          <Field label="Cleanup frequency" spellcheck={false} value={form.cleanupFrequency} onInput={set('cleanupFrequency')} error={errors.cleanupFrequency} hint={cronReading(form.cleanupFrequency)} />
          <Field
            label="Keep sent deliveries for (ms)"
            inputMode="numeric"
            value={form.deliveryRetentionDelayMs}
            onInput={set('deliveryRetentionDelayMs')}
            error={errors.deliveryRetentionDelayMs}
            hint={msReading(form.deliveryRetentionDelayMs)}
          />
          <Field
            label="Keep failed deliveries for (ms)"
            inputMode="numeric"
            value={form.failedDeliveryRetentionDelayMs}
            onInput={set('failedDeliveryRetentionDelayMs')}
            error={errors.failedDeliveryRetentionDelayMs}
            hint={msReading(form.failedDeliveryRetentionDelayMs)}
          />
          <Field label="Request time-out (ms)" inputMode="numeric" value={form.requestTimeoutMs} onInput={set('requestTimeoutMs')} error={errors.requestTimeoutMs} hint={`${msReading(form.requestTimeoutMs)} per attempt (1000 to 60000 ms)`} />
          <Field label="Retry schedule (ms, comma-separated)" value={form.retryScheduleMs} onInput={set('retryScheduleMs')} error={errors.retryScheduleMs} hint={scheduleReading(form.retryScheduleMs)} />
        </div>
        <div class="settings-grid">
          <Field
            label="Disable a failing webhook after (ms)"
            inputMode="numeric"
            value={form.autoDisableAfterMs}
            onInput={set('autoDisableAfterMs')}
            error={errors.autoDisableAfterMs}
            hint={autoDisableReading(form.autoDisableAfterMs)}
          />
          <Field
            label="Keep alert runs for (ms)"
            inputMode="numeric"
            value={form.alertRunRetentionDelayMs}
            onInput={set('alertRunRetentionDelayMs')}
            error={errors.alertRunRetentionDelayMs}
            hint={`${msReading(form.alertRunRetentionDelayMs)}; the newest 100 runs of each alert are always kept`}
          />
          <Field
            label="Keep the audit log for (ms)"
            inputMode="numeric"
            value={form.auditRetentionDelayMs}
            onInput={set('auditRetentionDelayMs')}
            error={errors.auditRetentionDelayMs}
            hint={`${msReading(form.auditRetentionDelayMs)}; who changed alerts, cases, groups and rights, removed on the cleanup schedule`}
          />
        </div>
        {errors.form ? <Notice kind="error">Nothing was saved: {errors.form}</Notice> : null}
        {!errors.form && Object.keys(errors).length ? <Notice kind="error">Nothing was saved: fix the value marked above.</Notice> : null}
        {saved ? <Notice kind="success">Settings saved.</Notice> : null}
        <button type="submit" disabled={busy}>
          Save settings
        </button>
      </form>
    </>
  );
}
