import { EventEmitter } from 'node:events';
import { OutageWarning } from '../db/outage-warning.js';
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
  // When the row held what #current holds (µs since the epoch, the clock of the writing statement): a read that
  // began before a later change committed, and ends after it was applied, must not put the older value back.
  #currentVersion: bigint;
  #events = new EventEmitter();
  #stopListening: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #refreshOutage: OutageWarning;

  private constructor(
    private readonly db: Database,
    initial: VersionedSettings,
    private readonly log: Logger,
  ) {
    this.#current = initial.settings;
    this.#currentVersion = initial.version;
    this.#refreshOutage = new OutageWarning(log, 'cannot read the settings; keeping the last known ones and retrying', 'reading the settings works again');
  }

  static async open(db: Database, log: Logger = createLogger('silent')): Promise<SettingsStore> {
    return new SettingsStore(db, await readVersionedSettings(db), log);
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
      const settings = change(normaliseStoredSettings(rows[0]?.value));
      // clock_timestamp(), not now(): taken under the row lock, so later changes get later versions.
      const { rows: written } = await tx.query<{ version: string }>(
        `UPDATE settings SET value = $1, updated_at = clock_timestamp() WHERE section = 'webhooks' RETURNING ${VERSION_SQL}`,
        [JSON.stringify(settings)],
      );
      await tx.query('SELECT pg_notify($1, $2)', [CHANNEL, 'webhooks']);
      return { settings, version: BigInt(written[0]!.version) };
    });
    this.#apply(next);
    return next.settings;
  }

  async refresh(): Promise<void> {
    try {
      this.#apply(await readVersionedSettings(this.db));
      this.#refreshOutage.worked();
    } catch (err) {
      // The database is briefly unreachable: keep the last known settings, the next refresh retries.
      this.#refreshOutage.failed(err);
    }
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#stopListening?.();
    this.#events.removeAllListeners();
  }

  #apply(next: VersionedSettings): void {
    if (next.version < this.#currentVersion) return; // read before a change this process has applied since
    this.#currentVersion = next.version;
    if (JSON.stringify(next.settings) === JSON.stringify(this.#current)) return;
    this.#current = next.settings;
    this.#events.emit('change', next.settings);
  }
}

interface VersionedSettings {
  settings: WebhookSettings;
  version: bigint;
}

const VERSION_SQL = `(extract(epoch FROM updated_at) * 1000000)::bigint AS version`;

async function readVersionedSettings(db: Queryable): Promise<VersionedSettings> {
  const { rows } = await db.query<{ value: unknown; version: string | null }>(`SELECT value, ${VERSION_SQL} FROM settings WHERE section = 'webhooks'`);
  return { settings: normaliseStoredSettings(rows[0]?.value), version: BigInt(rows[0]?.version ?? 0) };
}

/** Reads the section inside a transaction, so a domain change sees the `enabled` its commit is judged by. */
export async function readWebhookSettings(db: Queryable): Promise<WebhookSettings> {
  const { rows } = await db.query<{ value: unknown }>(`SELECT value FROM settings WHERE section = 'webhooks'`);
  return normaliseStoredSettings(rows[0]?.value);
}
