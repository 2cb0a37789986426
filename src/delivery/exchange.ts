import type { Dispatcher } from 'undici';

/**
 * After the kept head of a response body, up to this many more bytes are read and thrown away so the
 * connection can be reused; a longer (or endless) body is cut off by closing the connection instead.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** How one exchange ended: the receiver's answer, or the failure that stopped it (with the status, if one came). */
export type ExchangeEnd =
  | {
      answered: true;
      statusCode: number;
      headers: ResponseHeaders;
      /** The first `maxBytes` of the body. */
      head: Buffer;
      /** Nothing of the body was cut off. */
      whole: boolean;
      /** The response ended normally, so its connection goes back to the pool. */
      ended: boolean;
    }
  | { answered: false; error: unknown; statusCode?: number };

/** A response's headers as undici gives them (names in lower case). */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/**
 * One HTTP exchange of a delivery attempt, as the handler undici's `dispatch` calls: it keeps the first `maxBytes`
 * of the response body, drops the rest (up to DRAIN_LIMIT_BYTES, so the connection is reused; a longer body closes
 * the connection), and is also the attempt's deadline: `expire()` aborts the exchange wherever it is (before it has
 * a connection, as soon as it gets one; a body being read keeps what it kept). `end` settles once, never rejects.
 *
 * Why not undici's `request()`: its answer is a Readable stream, whose machinery (a tick per state change, events,
 * a destroy) was the largest part of the sender's own CPU after the write itself (a drain's profile: `nextTick` alone
 * 3.9% of the service, from the body streams). Measured here on 24 November (2 cores, a slow day; the bench's
 * receiver in another process, 64 at a time, signed newCase bodies):
 * - a bare client, 3 interleaved rounds of 30,000: `request()` 55–101 µs of the client's CPU a request, `dispatch`
 *   with a handler of this shape 44–75 µs (−15–32%);
 * - DeliverySender.send itself, before and after this change, 2 rounds of 40,000 in each of 3 interleaved processes:
 *   119–142 µs a request (one round 92) against 109–114 (one round 57), and a smaller process (RSS 121–128 MB
 *   against 132–139).
 * Drains of 100,000 (PostgreSQL, 7 interleaved pairs) could not tell it apart that day: the machine's pace moved
 * twofold between runs minutes apart. Their peak RSS rose from 183–184 MB to 207–213 MB, flat with the drain's size
 * (210 MB after 300,000), and both were 179–180 MB with V8's young generation capped (`--max-semi-space-size=4`): V8
 * grew its young generation for this allocation pattern, nothing is kept longer.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly end: Promise<ExchangeEnd>;
  #settle!: (end: ExchangeEnd) => void;
  #settled = false;
  #expired = false;
  #controller: Dispatcher.DispatchController | undefined;
  #statusCode: number | undefined;
  #respondedAt: number | undefined;
  #headers: ResponseHeaders = {};
  #length: number | undefined;
  #chunks: Buffer[] = [];
  #kept = 0;
  #seen = 0;

  /** `at`: the deadline, as a performance.now() time. */
  constructor(
    readonly at: number,
    private readonly maxBytes: number,
  ) {
    this.end = new Promise((resolve) => (this.#settle = resolve));
  }

  /** When the final answer's status line and headers came (performance.now()), if they did: its time to first byte. */
  get respondedAt(): number | undefined {
    return this.#respondedAt;
  }

  /** The deadline passed (see expire). */
  get expired(): boolean {
    return this.#expired;
  }

  /** The deadline has passed: abort the exchange now, or as soon as it has a connection. */
  expire(): void {
    this.#expired = true;
    if (!this.#settled) this.#controller?.abort(new Error('attempt deadline passed'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#expired) controller.abort(new Error('attempt deadline passed'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    if (statusCode < 200) return; // an informational answer; the real one follows
    this.#statusCode = statusCode;
    this.#respondedAt = performance.now();
    this.#headers = headers;
    this.#length = contentLength(headers['content-length']);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#seen += chunk.length;
    const room = this.maxBytes - this.#kept;
    if (room > 0) {
      const take = Math.min(room, chunk.length);
      this.#chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
      this.#kept += take;
    }
    if (this.#kept >= this.maxBytes && (this.#length ?? this.#seen) - this.maxBytes > DRAIN_LIMIT_BYTES) {
      this.#answer(false, false);
      controller.abort(new Error('response body cut off')); // not read: closing its connection is cheaper
    }
  }

  onResponseEnd(): void {
    this.#answer(this.#seen === this.#kept, true);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    // Once all that is kept has come, a failure while dropping the rest changes nothing.
    if (this.#statusCode !== undefined && this.#kept >= this.maxBytes) this.#answer(false, false);
    else this.#finish(this.#statusCode === undefined ? { answered: false, error } : { answered: false, error, statusCode: this.#statusCode });
  }

  #answer(whole: boolean, ended: boolean): void {
    const head = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#kept);
    this.#finish({ answered: true, statusCode: this.#statusCode ?? 0, headers: this.#headers, head, whole, ended });
  }

  #finish(end: ExchangeEnd): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = [];
    this.#settle(end);
  }
}

function contentLength(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
