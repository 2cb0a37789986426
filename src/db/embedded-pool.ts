import { Worker } from 'node:worker_threads';
import type { DatabaseHealth } from './health.js';
import { errorFrom, type NamedStatement, type OpenRequest, type StatementResult, type ThreadReply, type ThreadRequest } from './embedded-protocol.js';
import { databaseStopped } from './db-errors.js';

/** One statement at a time on a session: what the database seam needs of a pool (pg.Pool has the same shape). */
export interface Session {
  query(statement: string | NamedStatement, params?: unknown[]): Promise<StatementResult>;
  /** Gives the session back; `err` says it failed in a way that may have left it unusable (PostgreSQL discards it). */
  release(err?: Error): void;
}

// How long health waits for its `SELECT 1` before asking whether the database is merely busy.
const BUSY_CHECK_MS = 500;
// A database that has neither finished a statement nor started one for this long is stuck, not busy. The
// longest single statements the service runs are a fan-out insert (bounded per call, see limits.ts) and the
// embedded autovacuum's VACUUM of a large table (a 1,000,000-row cleanup took 20.9 s in the benchmark); this is
// several times those.
const STALL_LIMIT_MS = 120_000;

interface Pending {
  resolve(reply: ThreadReply): void;
  reject(err: Error): void;
}

/**
 * The embedded database's thread, seen as a pool of one session: `connect()` waits its turn (first come, first
 * served) as pg.Pool of one connection would, so a transaction's statements never interleave with others'.
 */
export class EmbeddedPool {
  readonly #thread: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: Error | undefined;
  #sessionHeld = false;
  readonly #waiting: (() => void)[] = [];
  // When the thread last showed progress: answered a statement, or was handed one while idle.
  #progressAt = Date.now();

  private constructor(thread: Worker) {
    this.#thread = thread;
    thread.on('message', (reply: ThreadReply) => {
      if (!('id' in reply)) return;
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      this.#progressAt = Date.now();
      // An idle thread must not keep the process alive; one with statements in flight must.
      if (this.#pending.size === 0) thread.unref();
      pending.resolve(reply);
    });
    const fail = (err: Error) => {
      this.#failure ??= err;
      for (const pending of this.#pending.values()) pending.reject(this.#failure);
      this.#pending.clear();
    };
    thread.on('error', (err) => fail(databaseStopped(`the embedded database stopped: ${err.message}`)));
    thread.on('exit', (code) => fail(databaseStopped(`the embedded database stopped (thread exit code ${code})`)));
  }

  /** Starts the thread and opens PGlite in `pgdata` there. */
  static async open(pgdata: string): Promise<EmbeddedPool> {
    const thread = startThread({ pgdata });
    const opened = await new Promise<ThreadReply>((resolve, reject) => {
      thread.once('message', resolve);
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`the embedded database thread exited with code ${code} while opening`)));
    });
    if ('openFailed' in opened) {
      await thread.terminate();
      throw errorFrom(opened.openFailed);
    }
    thread.unref();
    return new EmbeddedPool(thread);
  }

  async connect(): Promise<Session> {
    if (this.#sessionHeld) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#sessionHeld = true;
    let released = false;
    return {
      query: (statement, params) => this.#statement(statement, params),
      release: () => {
        if (released) return;
        released = true;
        const next = this.#waiting.shift();
        if (next) next();
        else this.#sessionHeld = false;
      },
    };
  }

  async query(statement: string | NamedStatement, params?: unknown[]): Promise<StatementResult> {
    const session = await this.connect();
    try {
      return await session.query(statement, params);
    } finally {
      session.release();
    }
  }

  /**
   * Whether the embedded database is there, answered within `timeoutMs`. PGlite runs a statement from start to
   * end without turning its thread's event loop (measured: during a 2 s pg_sleep no timer of that thread fired),
   * so nothing sent to the thread, not even a message that would bypass PGlite, is answered while a long
   * statement runs, and the one session serves statements in turn. So healthy means: `SELECT 1` answers within
   * `timeoutMs`; or it is still waiting its turn behind other work (a large call's transaction) and the thread
   * has finished or started a statement less than STALL_LIMIT_MS ago. A thread that stopped (crashed, or the
   * pool was closed) is not healthy, at once; nor is one that does not answer `SELECT 1` once it is its turn.
   */
  async health(timeoutMs: number): Promise<DatabaseHealth> {
    if (this.#failure) return { ok: false, reason: this.#failure.message };
    const deadline = Date.now() + timeoutMs;
    let ourTurn = false;
    const answered = this.connect().then(async (session) => {
      ourTurn = true;
      try {
        await session.query('SELECT 1');
      } finally {
        session.release();
      }
    });
    const outcome: Promise<true | Error> = answered.then(
      () => true,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const pause = new Promise<'waiting'>((resolve) => (timer = setTimeout(() => resolve('waiting'), Math.max(0, Math.min(BUSY_CHECK_MS, deadline - Date.now())))));
      const result = await Promise.race([outcome, pause]).finally(() => clearTimeout(timer));
      if (result === true) return { ok: true };
      if (result instanceof Error) return { ok: false, reason: result.message };
      // (Read again: the thread may have stopped while this waited.)
      const failure = this.#failure as Error | undefined;
      if (failure) return { ok: false, reason: failure.message };
      if (!ourTurn && Date.now() - this.#progressAt < STALL_LIMIT_MS) return { ok: true, busy: true };
      if (Date.now() >= deadline) return { ok: false, reason: `no answer within ${timeoutMs} ms` };
    }
  }

  /** Waits for the session, closes PGlite cleanly (it writes its files on close), and stops the thread. */
  async end(): Promise<void> {
    const session = await this.connect();
    let closing: ThreadReply | undefined;
    try {
      if (!this.#failure) closing = await this.#send({ id: this.#nextId++, close: true });
    } finally {
      session.release();
      await this.#thread.terminate();
    }
    if (closing && 'error' in closing) throw errorFrom(closing.error);
  }

  async #statement(statement: string | NamedStatement, params: unknown[] | undefined): Promise<StatementResult> {
    const request = typeof statement === 'string' ? { text: statement, name: undefined } : { text: statement.text, name: statement.name };
    const reply = await this.#send({ id: this.#nextId++, ...request, params });
    if ('error' in reply) throw errorFrom(reply.error);
    if (!('result' in reply)) throw new Error('the embedded database answered out of turn');
    return reply.result;
  }

  #send(request: ThreadRequest): Promise<ThreadReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) {
        this.#thread.ref();
        this.#progressAt = Date.now();
      }
      this.#pending.set(request.id, { resolve, reject });
      this.#thread.postMessage(request);
    });
  }
}

/*
 * The thread's young generation: V8 lets it grow to 32 MB, all resident, for what is short-lived garbage (each
 * statement's protocol buffers and rows). Measured on the 100,000-delivery drain: 8 MB kept the thread's heap at
 * ~30 MB instead of ~50 MB, with no change in its CPU per delivery.
 */
const THREAD_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8 };

function startThread(workerData: OpenRequest): Worker {
  const entry = new URL(import.meta.url.endsWith('.ts') ? './embedded-thread.ts' : './embedded-thread.js', import.meta.url);
  if (entry.pathname.endsWith('.js')) return new Worker(entry, { workerData, resourceLimits: THREAD_RESOURCE_LIMITS });
  // Running from TypeScript sources (tests, `npm run cli`): the thread loads tsx first, as the process did.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits: THREAD_RESOURCE_LIMITS });
}
