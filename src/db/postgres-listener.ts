import pg from 'pg';
import type { Logger } from '../logger.js';
import { describeDbError } from './db-errors.js';

// Reconnecting after the connection is lost: 100 ms, doubling up to 5 s, each wait drawn from its upper half
// (jitter), so many processes losing one server at once do not all come back in the same millisecond.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
// A reconnect against a server that swallows packets (a failover in progress) gives up after this and tries again.
const CONNECT_TIMEOUT_MS = 10_000;
// TCP keepalive: a connection whose server vanished without a word (no FIN, no RST) is noticed in about this long
// plus the kernel's probes, rather than the default two hours of silence.
const KEEPALIVE_DELAY_MS = 10_000;

interface Subscription {
  onNotify(payload: string): void;
  /** Called once the connection is back: NOTIFYs sent while it was away were missed. */
  onReconnect?(): void;
}

/**
 * LISTEN on PostgreSQL, over one connection of its own (not the pool's: a LISTEN must hold its connection, and a
 * busy pool must not delay it). A lost connection (the server restarting, a failover, `pg_terminate_backend`) is
 * logged and re-established with backoff, its channels subscribed again, and every subscriber told so it can
 * catch up on what it missed. Nothing here throws after the first connection: the process stays up.
 */
export class PostgresListener {
  readonly #channels = new Map<string, Set<Subscription>>();
  #client: pg.Client | undefined;
  #subscribed = new Set<string>(); // the channels LISTENed on #client
  #connecting: Promise<void> | undefined;
  #lostAt: number | undefined; // set while the connection is lost
  #retries = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /**
   * Subscribes to `channel`. The first call connects, and throws if the database cannot be reached (a process
   * cannot start without it); later calls while the connection is lost subscribe on its return.
   */
  async listen(channel: string, subscription: Subscription): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error('the database is closed');
    let subscribers = this.#channels.get(channel);
    if (!subscribers) this.#channels.set(channel, (subscribers = new Set()));
    subscribers.add(subscription);
    try {
      if (!this.#client && this.#lostAt === undefined) {
        // Never connected: this connects and subscribes every channel, this one included.
        this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
        await this.#connecting;
      }
      // Connected (a connection being re-established subscribes every channel itself).
      const client = this.#client;
      if (client && !this.#subscribed.has(channel)) {
        this.#subscribed.add(channel);
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
    } catch (err) {
      this.#unsubscribe(channel, subscription);
      throw err;
    }
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      if (this.#unsubscribe(channel, subscription) && this.#client) {
        this.#subscribed.delete(channel);
        await this.#client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch((err: unknown) => {
          // The connection is gone: it listens to nothing any more, and will not subscribe this channel again.
          this.log.debug({ error: describeDbError(err), channel }, 'UNLISTEN failed');
        });
      }
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    // A connection on its way is not waited for (against a server that swallows packets that is CONNECT_TIMEOUT_MS
    // of a shutdown): it sees #closed once connected and ends itself.
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  /** Answers whether that was the channel's last subscriber. */
  #unsubscribe(channel: string, subscription: Subscription): boolean {
    const subscribers = this.#channels.get(channel);
    if (!subscribers?.delete(subscription) || subscribers.size > 0) return false;
    this.#channels.delete(channel);
    return true;
  }

  /** Opens the connection and subscribes every channel; throws (leaving nothing open) if either fails. */
  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    });
    let failure: unknown;
    const onFailure = (err: unknown) => {
      failure ??= err;
      this.#lost(client, err);
    };
    // Handled from the start: an 'error' without a listener would end the process.
    client.on('error', onFailure);
    client.on('end', () => onFailure(new Error('the connection ended')));
    client.on('notification', (msg) => {
      for (const subscription of this.#channels.get(msg.channel) ?? []) subscription.onNotify(msg.payload ?? '');
    });
    const subscribed = new Set<string>();
    try {
      await client.connect();
      // Until every channel is subscribed, those added while this connection was on its way included.
      for (let missing = [...this.#channels.keys()]; missing.length > 0; missing = [...this.#channels.keys()].filter((c) => !subscribed.has(c))) {
        for (const channel of missing) {
          await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
          subscribed.add(channel);
        }
      }
      // Lost between its last answer and now: as if the connect had failed.
      if (failure) throw failure;
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#subscribed = subscribed;
  }

  #lost(client: pg.Client, err: unknown): void {
    if (client !== this.#client || this.#closed) return;
    this.#client = undefined;
    this.#subscribed = new Set();
    this.#lostAt = Date.now();
    this.#retries = 0;
    void client.end().catch(() => {});
    this.log.warn({ error: describeDbError(err), channels: [...this.#channels.keys()] }, 'lost the database connection that listens for changes; reconnecting');
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.#retries);
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#retries++;
    this.#retryTimer = setTimeout(() => void this.#reconnect(), delay);
    // A process that has nothing else to do may end while waiting.
    this.#retryTimer.unref();
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return;
    try {
      this.#connecting = this.#connect();
      await this.#connecting;
    } catch (err) {
      this.log.debug({ error: describeDbError(err), retries: this.#retries }, 'reconnecting the listening connection failed; retrying');
      this.#scheduleReconnect();
      return;
    } finally {
      this.#connecting = undefined;
    }
    if (this.#closed) return;
    const downMs = Date.now() - (this.#lostAt ?? Date.now());
    this.#lostAt = undefined;
    this.log.info({ downMs, retries: this.#retries, channels: [...this.#channels.keys()] }, 'listening for changes again');
    for (const subscribers of this.#channels.values()) {
      for (const subscription of subscribers) subscription.onReconnect?.();
    }
  }
}
