import { StringDecoder } from 'node:string_decoder';
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import { errorCode } from '../errors.js';
import { guardedConnector, type AddressResolver } from '../network/guarded-connector.js';
import { RECEIVER_BLOCKED } from '../network/receiver-blocked.js';
import { DEFAULT_RECEIVER_POLICY, type ReceiverPolicy } from '../network/receiver-policy.js';
import { VERSION } from '../version.js';
import { Exchange } from './exchange.js';
import { recordableText, recordResponseHeaders } from './recorded-headers.js';
import { MAX_RETRY_AFTER_MS } from './retry-policy.js';

/** One HTTP attempt of a delivery. `headers` are added to Content-Type and User-Agent (normally the signature headers). */
export interface DeliveryRequest {
  url: string;
  /** The exact bytes to send (a string is sent as UTF-8). */
  body: string | Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
}

interface SendCommon {
  /** The first `maxResponseBytes` (4 KiB) of the response body, as UTF-8; absent when the body was empty. */
  responseBody?: string;
  /** Set when the response body was longer than what `responseBody` keeps. */
  responseBodyTruncated?: true;
  /** Whole milliseconds from the start of the attempt to its outcome. */
  durationMs: number;
  /**
   * The headers of the request, as sent, or as it would have been when no connection was made (signatures included:
   * they prove a body, and reveal nothing of the secret); absent when the attempt did not get that far (a bad URL, a
   * closed sender). HTTP adds Host and Content-Length.
   */
  requestHeaders?: Record<string, string>;
  /** The answer's headers, bounded (see recordResponseHeaders); absent when no answer came. */
  responseHeaders?: Record<string, string>;
  /** Set when some response headers were left out by the bounds. */
  responseHeadersTruncated?: true;
  /** Whole milliseconds from the start of the attempt to the answer's status line and headers; absent without one. */
  timeToFirstByteMs?: number;
}

/** A send the receiver accepted: it answered 2xx. */
export interface SendSucceeded extends SendCommon {
  ok: true;
  responseStatus: number;
}

/** A send that failed: any other answer, or none. `error` never holds the secret or the request headers. */
export interface SendFailed extends SendCommon {
  ok: false;
  error: string;
  /** The receiver's status, when it answered. */
  responseStatus?: number;
  /** From `Retry-After` on a 429 or 503, capped at 24 h. */
  retryAfterMs?: number;
  /**
   * Set when the receiver policy refused the connection (no connection was made; `error` names the address and the
   * rule). Nothing reads it yet: GET /metrics counts attempts by the delivery's status, blocked ones among the failed.
   */
  blocked?: true;
}

/** What one send came to: accepted, with the status, or failed, with the reason. */
export type SendOutcome = SendSucceeded | SendFailed;

export interface DeliverySenderOptions {
  /** Defaults to `alert-webhooks/<package version>`. */
  userAgent?: string;
  /** Keep-alive connections per receiver origin (scheme + host + port); default 64. */
  connectionsPerOrigin?: number;
  /** How much of a response body is kept; default 4096. */
  maxResponseBytes?: number;
  /**
   * Certificates (PEM) to trust besides Node's bundled roots, such as a private CA's. A deployment can also use
   * Node's NODE_EXTRA_CA_CERTS.
   */
  extraCaCertificates?: string;
  /** Which receiver addresses a connection may reach, checked where it is made; default DEFAULT_RECEIVER_POLICY. */
  receiverPolicy?: ReceiverPolicy;
  /** Where receiver host names are resolved: dns.lookup, unless a test maps names of its own (to loopback only). */
  resolveAddresses?: AddressResolver;
}

const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;
const DEFAULT_MAX_RESPONSE_BYTES = 4096;
/** What setTimeout can wait. */
const MAX_TIMEOUT_MS = 2_147_483_647;
/**
 * How often the attempts in flight are checked against their deadlines: a deadline fires up to this late. One
 * sweep for all attempts, rather than a timer each: an AbortController with a timer per attempt cost about 5% of the
 * worker's CPU (measured earlier).
 */
const DEADLINE_SWEEP_MS = 50;

/**
 * Sends delivery attempts over keep-alive connections: one undici `Pool` per receiver origin, made on
 * first use and dropped (closed) once its last connection has gone, so idle receivers cost nothing.
 *
 * Measured on loopback (one sender, a node:http receiver answering 204 in another process,
 * 450-byte bodies, 2 vCPUs shared with other work, so noisy), median of 8 rounds:
 *   64 concurrent sends: Pool per origin in a Map ~15.3k req/s, one Agent({connections: 64}) ~11.3k req/s;
 *   sequential sends:    Pool ~5.5k req/s, Agent ~5.7k req/s.
 * Within the noise they are equal (the Agent is a Map of Pools plus a lookup); the Pool map was kept.
 * This class itself (with a per-attempt AbortSignal then, since replaced by one shared deadline sweep; 4 KiB body
 * read) measured 6-11k req/s at 64 concurrent sends
 * and ~3.7k req/s sequentially on the same loaded host, over 64 connections resp. 1 (keep-alive):
 * every send after the first reuses an open connection.
 */
export class DeliverySender {
  readonly #userAgent: string;
  readonly #connections: number;
  readonly #maxResponseBytes: number;
  readonly #ca: string[] | undefined;
  readonly #policy: ReceiverPolicy;
  readonly #resolve: AddressResolver | undefined;
  readonly #pools = new Map<string, Pool>();
  readonly #urls = new Map<string, ParsedUrl>();
  /** The deadlines of the attempts in flight, checked by one sweep while there are any. */
  readonly #deadlines = new Set<Exchange>();
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DeliverySenderOptions = {}) {
    this.#userAgent = options.userAgent ?? `alert-webhooks/${VERSION}`;
    this.#connections = positiveInteger(options.connectionsPerOrigin, DEFAULT_CONNECTIONS_PER_ORIGIN, 'connectionsPerOrigin');
    this.#maxResponseBytes = positiveInteger(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
    // A `ca` replaces the bundled roots rather than adding to them: keep them.
    this.#ca = options.extraCaCertificates === undefined ? undefined : [...rootCertificates, options.extraCaCertificates];
    this.#policy = options.receiverPolicy ?? DEFAULT_RECEIVER_POLICY;
    this.#resolve = options.resolveAddresses;
  }

  /**
   * One POST attempt. Never throws: every failure is an outcome with `ok: false` and a short `error`.
   * `headers` names must be lower case (the signer's are).
   */
  async send(req: DeliveryRequest): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const timeoutMs = req.timeoutMs;

    const url = this.#parse(req.url);
    if (typeof url === 'string') return { ok: false, error: url, durationMs: elapsed() };
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
      return { ok: false, error: 'request failed: invalid timeout', durationMs: elapsed() };
    }
    if (this.#closed) {
      return { ok: false, error: 'request failed: sender is closed', durationMs: elapsed() };
    }

    // One total deadline, from the start of the attempt to the last byte read: a receiver trickling its answer (1 byte
    // every 200 ms) kept an attempt open for hours when only undici's own time-outs bounded it, since they bound each
    // gap between bytes. Those stay, as a second line; the deadline cuts the attempt wherever it is (see Exchange).
    const exchange = new Exchange(performance.now() + timeoutMs, this.#maxResponseBytes);
    this.#watch(exchange);
    // Kept in the outcome too: the attempt log records what was sent.
    const requestHeaders = { ...req.headers, 'content-type': 'application/json', 'user-agent': this.#userAgent };
    // dispatch never throws: a failure, even a closed pool's, reaches the exchange.
    this.#pool(url.origin, timeoutMs).dispatch(
      {
        method: 'POST',
        path: url.path,
        headers: requestHeaders,
        body: req.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      exchange,
    );
    const end = await exchange.end;
    this.#deadlines.delete(exchange);
    if (!end.answered) return unansweredOutcome(end, exchange, { started, timeoutMs, hostname: url.hostname, requestHeaders });
    const outcome = answeredOutcome(end, exchange, started, requestHeaders);
    outcome.durationMs = elapsed();
    if (end.ended) {
      // undici hands a kept-alive connection back to its pool one event-loop turn after the response
      // ends (setImmediate in client-h1): wait for it, so a send right after this one reuses it.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return outcome;
  }

  /** Closes every connection, after the attempts under way have finished. Later sends fail at once. */
  async close(): Promise<void> {
    this.#closed = true;
    // Attempts under way keep their deadlines: the sweep runs until the last of them is gone.
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.close().catch(() => undefined)));
  }

  /** Puts an attempt's deadline under the sweep, starting the sweep if it is not running. */
  #watch(exchange: Exchange): void {
    this.#deadlines.add(exchange);
    this.#sweep ??= setInterval(() => this.#expireDue(), DEADLINE_SWEEP_MS).unref();
  }

  /** Fires every deadline that has passed; stops the sweep once no attempt is in flight (an idle sender costs nothing). */
  #expireDue(): void {
    const now = performance.now();
    for (const deadline of this.#deadlines) {
      if (deadline.at > now) continue;
      this.#deadlines.delete(deadline);
      deadline.expire();
    }
    if (this.#deadlines.size === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  }

  /** The parts of a receiver URL a request needs, parsed once per URL; or why it cannot be sent to. */
  #parse(raw: string): ParsedUrl | string {
    let parsed = this.#urls.get(raw);
    if (parsed === undefined) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return 'request failed: invalid URL';
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return `request failed: unsupported protocol ${url.protocol}`;
      parsed = { origin: url.origin, path: url.pathname + url.search, hostname: url.hostname };
      // Receivers are few; a cap keeps a pathological caller from growing this without end.
      if (this.#urls.size >= 10_000) this.#urls.clear();
      this.#urls.set(raw, parsed);
    }
    return parsed;
  }

  /**
   * The keep-alive pool of an origin, one per connect time-out (the time-out setting rarely changes). Its connections
   * are made by the guarded connector: every address is checked against the receiver policy where the connection is
   * made, and the socket goes to the address checked (see guardedConnector). The connector carries the connect
   * time-out (a Pool's `connectTimeout` reaches only a connector it builds itself), set to the attempt's time-out: it
   * is what bounds the connect phase, name resolution included, since undici applies a request's abort signal (the
   * attempt's deadline) only once the request has a connection. Connecting starts with the attempt, so the two end
   * together (test: a resolver that never answers ends the attempt at its time-out).
   */
  #pool(origin: string, connectTimeoutMs: number): Pool {
    const key = `${connectTimeoutMs} ${origin}`;
    let pool = this.#pools.get(key);
    if (pool === undefined || pool.closed || pool.destroyed) {
      const created = new Pool(origin, {
        connections: this.#connections,
        connect: guardedConnector({
          policy: this.#policy,
          timeout: connectTimeoutMs,
          ...(this.#ca === undefined ? {} : { ca: this.#ca }),
          ...(this.#resolve === undefined ? {} : { resolve: this.#resolve }),
        }),
      });
      const dropIfIdle = (): void => {
        const stats = created.stats;
        if (stats.connected === 0 && stats.size === 0 && this.#pools.get(key) === created) {
          this.#pools.delete(key);
          created.close().catch(() => undefined);
        }
      };
      created.on('disconnect', dropIfIdle);
      created.on('connectionError', dropIfIdle);
      this.#pools.set(key, created);
      pool = created;
    }
    return pool;
  }
}

function timedOut(timeoutMs: number): string {
  return `timed out after ${timeoutMs} ms`;
}

interface ParsedUrl {
  origin: string;
  path: string;
  hostname: string;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** `Retry-After` as delay-seconds or an HTTP-date, in ms from now (0 if already past), at most 24 h. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    if (!/^[A-Za-z]{3},? /.test(text)) return undefined; // an HTTP-date starts with the day name
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

const TLS_MESSAGES: Record<string, string> = {
  CERT_HAS_EXPIRED: 'TLS: certificate has expired',
  CERT_NOT_YET_VALID: 'TLS: certificate is not yet valid',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: self-signed certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: unable to verify the certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS: unable to get the local issuer certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'TLS: unable to get the issuer certificate',
  CERT_REVOKED: 'TLS: certificate has been revoked',
  CERT_UNTRUSTED: 'TLS: certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: certificate does not match the host name',
};

/** The coded errors in a failure, the outermost first, looking into `cause` and AggregateError (happy eyeballs). */
function codedErrors(err: unknown, found: { code: string; message: string }[] = [], depth = 0): { code: string; message: string }[] {
  if (typeof err !== 'object' || err === null || depth > 4) return found;
  const code = errorCode(err);
  const { message } = err as { message?: unknown };
  if (code !== undefined) found.push({ code, message: typeof message === 'string' ? message : '' });
  if (err instanceof AggregateError) {
    for (const inner of err.errors) codedErrors(inner, found, depth + 1);
  }
  return codedErrors((err as { cause?: unknown }).cause, found, depth + 1);
}

/** Whether the receiver policy refused the connection (ReceiverBlockedError, possibly inside another error). */
function isBlocked(err: unknown): boolean {
  return codedErrors(err).some(({ code }) => code === RECEIVER_BLOCKED);
}

/**
 * A short, safe description of a failed attempt: error codes, the host name and (for a policy refusal) the address and
 * rule only, never headers or the body.
 */
function describeFailure(err: unknown, host: string, timeoutMs: number): string {
  const coded = codedErrors(err);
  for (const { code, message } of coded) {
    switch (code) {
      case RECEIVER_BLOCKED:
        // ReceiverBlockedError's own message: `blocked by receiver policy: <address> (<range>)`.
        return message;
      case 'ECONNREFUSED':
        return 'connection refused';
      case 'ECONNRESET':
      case 'EPIPE':
      case 'UND_ERR_SOCKET':
        return 'connection reset';
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EAI_NONAME':
      case 'EAI_NODATA':
        return `DNS lookup failed for ${host}`;
      case 'UND_ERR_HEADERS_TIMEOUT':
      case 'UND_ERR_BODY_TIMEOUT':
      case 'UND_ERR_CONNECT_TIMEOUT':
        return timedOut(timeoutMs);
      case 'ETIMEDOUT':
        return 'connection timed out';
    }
    const tls = TLS_MESSAGES[code];
    if (tls !== undefined) return tls;
    if (/^(ERR_TLS_|ERR_SSL_|CERT_)/.test(code)) {
      // Node's TLS messages are short reasons ("unable to verify the first certificate"); the code will do otherwise.
      return `TLS: ${message !== '' && message.length <= 120 ? message : code}`;
    }
  }
  if (coded[0] !== undefined) return `request failed: ${coded[0].code}`;
  const message = err instanceof Error ? err.message : String(err);
  return `request failed: ${message.length > 120 ? `${message.slice(0, 117)}...` : message}`;
}

type ExchangeEnd = Awaited<Exchange['end']>;

/** A failed attempt the receiver never answered whole: the deadline, the receiver policy, or the network. */
function unansweredOutcome(
  end: Extract<ExchangeEnd, { answered: false }>,
  exchange: Exchange,
  attempt: { started: number; timeoutMs: number; hostname: string; requestHeaders: Record<string, string> },
): SendFailed {
  const { started, timeoutMs, requestHeaders } = attempt;
  const failed = (error: string): SendFailed => {
    const outcome: SendFailed = { ok: false, error, durationMs: Math.round(performance.now() - started), requestHeaders };
    if (end.statusCode !== undefined) outcome.responseStatus = end.statusCode;
    if (exchange.respondedAt !== undefined) outcome.timeToFirstByteMs = Math.round(exchange.respondedAt - started);
    return outcome;
  };
  if (exchange.expired) return failed(timedOut(timeoutMs));
  // A refusal by the receiver policy is a failed attempt like any other (retried: the policy, or the receiver's
  // DNS, may change meanwhile); it is marked as such (see SendFailed.blocked).
  const outcome = failed(describeFailure(end.error, attempt.hostname, timeoutMs));
  if (end.statusCode === undefined && isBlocked(end.error)) outcome.blocked = true;
  return outcome;
}

/** An attempt the receiver answered: 2xx is delivered, anything else failed; what it said is kept, bounded. */
function answeredOutcome(end: Extract<ExchangeEnd, { answered: true }>, exchange: Exchange, started: number, requestHeaders: Record<string, string>): SendOutcome {
  const { statusCode, headers: responseHeaders, head, whole } = end;
  const recorded = recordResponseHeaders(responseHeaders);
  const outcome: SendOutcome =
    statusCode >= 200 && statusCode < 300
      ? { ok: true, responseStatus: statusCode, durationMs: 0, requestHeaders, responseHeaders: recorded.headers }
      : {
          ok: false,
          responseStatus: statusCode,
          error: statusCode >= 300 && statusCode < 400 ? `receiver answered ${statusCode} (redirects are not followed)` : `receiver answered ${statusCode}`,
          durationMs: 0,
          requestHeaders,
          responseHeaders: recorded.headers,
        };
  if (recorded.truncated) outcome.responseHeadersTruncated = true;
  if (exchange.respondedAt !== undefined) outcome.timeToFirstByteMs = Math.round(exchange.respondedAt - started);
  if (head.length > 0) {
    // A cut-off body may end inside a multi-byte character: leave that partial character out.
    outcome.responseBody = recordableText(whole ? head.toString('utf8') : new StringDecoder('utf8').write(head));
  }
  if (!whole) outcome.responseBodyTruncated = true;
  if (!outcome.ok && (statusCode === 429 || statusCode === 503)) {
    const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']);
    if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  }
  return outcome;
}
