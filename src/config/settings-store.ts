import { EventEmitter } from 'node:events';
import { describeDbError } from '../db/db-errors.js';
import type { Database, Queryable } from '../db/database.js';
import { createLogger, type Logger } from '../logger.js';
import { normaliseStoredSettings, type WebhookSettings } from './webhook-settings.js';

const CHANNEL = 'alert_webhooks_settings';
// A safety net under LISTEN (a dropped connection misses a NOTIFY): reread the settings this often.
const REFRESH_INTERVAL_MS = 5_000;

/**
 * The stored `webhooks` settings, cached in each process and kept fresh: a change made by any process
 * reaches every other one through NOTIFY (PostgreSQL) or directly (the embedded database has one process).
 * Schedulers subscribe with `onChange`.
 */
export class SettingsStore {
  #current: WebhookSettings;
  #events = new EventEmitter();
  #stopListening: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #refreshFailing = false;

  private constructor(
    private readonly db: Database,
    initial: WebhookSettings,
    private readonly log: Logger,
  ) {
    this.#current = initial;
  }

  static async open(db: Database, log: Logger = createLogger('silent')): Promise<SettingsStore> {
    return new SettingsStore(db, await readWebhookSettings(db), log);
  }

  /** The settings as this process last saw them. */
  get webhooks(): Readonly<WebhookSettings> {
    return this.#current;
  }

  onChange(listener: (settings: WebhookSettings) => void): () => void {
    this.#events.on('change', listener);
    return () => this.#events.off('change', listener);
  }

  /**
   * Subscribes to changes made by other processes. After the listening connection was lost and is back, the
   * settings are read once: a change made meanwhile sent its NOTIFY to nobody.
   */
  async watch(): Promise<void> {
    this.#stopListening = await this.db.listen(
      CHANNEL,
      () => void this.refresh(),
      () => void this.refresh(),
    );
    this.#timer = setInterval(() => void this.refresh(), REFRESH_INTERVAL_MS);
    this.#timer.unref();
  }

  /**
   * Applies `change` to the stored section (not to this process's copy, which may lag another process's
   * change) under a row lock, and tells every process. A `change` that throws changes nothing.
   */
  async update(change: (current: WebhookSettings) => WebhookSettings): Promise<WebhookSettings> {
    const next = await this.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO settings (section, value) VALUES ('webhooks', '{}') ON CONFLICT (section) DO NOTHING`);
      const { rows } = await tx.query<{ value: unknown }>(`SELECT value FROM settings WHERE section = 'webhooks' FOR UPDATE`);
      const next = change(normaliseStoredSettings(rows[0]?.value));
      await tx.query(
        `UPDATE settings SET value = $1, updated_at = now() WHERE section = 'webhooks'`,
        [JSON.stringify(next)],
      );
      await tx.query('SELECT pg_notify($1, $2)', [CHANNEL, 'webhooks']);
      return next;
    });
    this.#apply(next);
    return next;
  }

  async refresh(): Promise<void> {
    try {
      this.#apply(await readWebhookSettings(this.db));
      if (this.#refreshFailing) this.log.info('reading the settings works again');
      this.#refreshFailing = false;
    } catch (err) {
      // The database is briefly unreachable: keep the last known settings, the next refresh retries. Told once
      // per outage, not every REFRESH_INTERVAL_MS.
      if (!this.#refreshFailing) this.log.warn({ error: describeDbError(err) }, 'cannot read the settings; keeping the last known ones and retrying');
      this.#refreshFailing = true;
    }
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#stopListening?.();
    this.#events.removeAllListeners();
  }

  #apply(next: WebhookSettings): void {
    if (JSON.stringify(next) === JSON.stringify(this.#current)) return;
    this.#current = next;
    this.#events.emit('change', next);
  }
}

/** Reads the section inside a transaction, so a domain change sees the `enabled` its commit is judged by. */
export async function readWebhookSettings(db: Queryable): Promise<WebhookSettings> {
  const { rows } = await db.query<{ value: unknown }>(`SELECT value FROM settings WHERE section = 'webhooks'`);
  return normaliseStoredSettings(rows[0]?.value);
}
