import { Worker } from 'node:worker_threads';
import { errorFrom, type OpenRequest, type StatementResult, type ThreadReply, type ThreadRequest } from './embedded-protocol.js';

/** One statement at a time on a session: what the database seam needs of a pool (pg.Pool has the same shape). */
export interface Session {
  query(text: string, params?: unknown[]): Promise<StatementResult>;
  release(): void;
}

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

  private constructor(thread: Worker) {
    this.#thread = thread;
    thread.on('message', (reply: ThreadReply) => {
      if (!('id' in reply)) return;
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      // An idle thread must not keep the process alive; one with statements in flight must.
      if (this.#pending.size === 0) thread.unref();
      pending.resolve(reply);
    });
    const fail = (err: Error) => {
      this.#failure ??= err;
      for (const pending of this.#pending.values()) pending.reject(this.#failure);
      this.#pending.clear();
    };
    thread.on('error', (err) => fail(new Error(`the embedded database stopped: ${err.message}`)));
    thread.on('exit', (code) => fail(new Error(`the embedded database stopped (thread exit code ${code})`)));
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
      query: (text, params) => this.#statement(text, params),
      release: () => {
        if (released) return;
        released = true;
        const next = this.#waiting.shift();
        if (next) next();
        else this.#sessionHeld = false;
      },
    };
  }

  async query(text: string, params?: unknown[]): Promise<StatementResult> {
    const session = await this.connect();
    try {
      return await session.query(text, params);
    } finally {
      session.release();
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

  async #statement(text: string, params: unknown[] | undefined): Promise<StatementResult> {
    const reply = await this.#send({ id: this.#nextId++, text, params });
    if ('error' in reply) throw errorFrom(reply.error);
    if (!('result' in reply)) throw new Error('the embedded database answered out of turn');
    return reply.result;
  }

  #send(request: ThreadRequest): Promise<ThreadReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#thread.ref();
      this.#pending.set(request.id, { resolve, reject });
      this.#thread.postMessage(request);
    });
  }
}

function startThread(workerData: OpenRequest): Worker {
  const entry = new URL(import.meta.url.endsWith('.ts') ? './embedded-thread.ts' : './embedded-thread.js', import.meta.url);
  if (entry.pathname.endsWith('.js')) return new Worker(entry, { workerData });
  // Running from TypeScript sources (tests, `npm run cli`): the thread loads tsx first, as the process did.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
