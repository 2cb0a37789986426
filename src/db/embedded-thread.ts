/**
 * The embedded database's thread. PGlite is PostgreSQL compiled to WebAssembly: it runs on the thread that calls
 * it, and on the service's own thread every claim, outcome batch and VACUUM stopped the HTTP work. Here it runs
 * beside it, so a 2-core machine uses both cores (bench/README.md, "The embedded database"). Statements arrive in
 * the order the service sent them and run one after another on PGlite's one session, through the same node-postgres
 * adapter and type parsers as PostgreSQL, so rows come back exactly as `pg` would give them.
 */
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { errorFields, type OpenRequest, type ThreadReply, type ThreadRequest } from './embedded-protocol.js';
import { typeParsers } from './type-parsers.js';

/*
 * Memory. With PGlite's defaults the service peaked near 500 MB in the bench's 100,000-delivery drain, where the
 * queue's tables are ~28 MB: PostgreSQL's shared_buffers (128 MB by default) live in PGlite's WebAssembly memory,
 * touched at start and never given back; the WebAssembly module compiled twice (Liftoff at start, TurboFan again
 * for its hot functions); this thread's young generation. The three settings below (here and in embedded-pool.ts)
 * took that to under 300 MB (bench/README.md, "The embedded database").
 *
 * shared_buffers=16MB: a page not in PostgreSQL's buffers is one read() from the operating system's cache away, and
 * the embedded thread's CPU over the drain did not grow. Only the buffer cache changes: PGlite's own start
 * parameters are kept, so durability is what it was (each commit written to the WAL file before it is answered).
 *
 * full_page_writes stays on, though with fsync off (PGlite's -F) it guards nothing a crash of the machine would not
 * break anyway: turning it off did not speed the drain.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
/*
 * Compile only the PostgreSQL functions that get called, once, with the optimising compiler: no Liftoff copy of
 * the whole module beside the optimised code, ~80 MB less memory for the same CPU (bench/README.md, "The
 * embedded database"). The first statements wait for their functions to compile. V8's flags are process-wide: they
 * are set before PGlite compiles its module and change only WebAssembly compiled from then on.
 */
const WASM_FLAGS = '--wasm-lazy-compilation --no-liftoff';
/*
 * The JavaScript heaps (the service's own thread and this one) grow by 10% after a full collection, not by V8's
 * factor of up to 4, which let the service's heap reach about twice what was live in a drain; the drain's pace did
 * not move. `--optimize-for-size` went lower but cost up to a fifth of the drain; not growing the young generation
 * (`--semi-space-growth-factor=1`) saved nothing (bench/README.md, "The embedded database"). Set with the others, on
 * the embedded database only: PostgreSQL keeps V8's defaults.
 */
const HEAP_FLAGS = '--heap-growing-percent=10';

const port = parentPort!;
const reply = (message: ThreadReply) => port.postMessage(message);

async function open(): Promise<void> {
  const { pgdata } = workerData as OpenRequest;
  let pglite: PGlite;
  let client: pg.PoolClient;
  let pool: pg.Pool;
  try {
    setFlagsFromString(WASM_FLAGS);
    setFlagsFromString(HEAP_FLAGS);
    pglite = await PGlite.create(pgdata, { startParams: START_PARAMS });
    pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, types: typeParsers });
    client = await pool.connect();
  } catch (err) {
    const { message } = errorFields(err);
    reply({ openFailed: { message: `cannot open the embedded database in ${pgdata}: ${message}` } });
    return;
  }
  port.on('message', (request: ThreadRequest) => {
    if ('close' in request) {
      client.release();
      pool
        .end()
        .then(() => pglite.close())
        .then(
          () => reply({ id: request.id, closed: true }),
          (err: unknown) => reply({ id: request.id, error: errorFields(err) }),
        );
      return;
    }
    // Not awaited: the client queues statements in arrival order, and the next one is handed over at once. A
    // named statement goes to pg as such: over PGlite's adapter, pg prepares it once in PGlite's one session (it
    // is then in pg_prepared_statements) and afterwards sends only Bind/Execute, as it does to PostgreSQL.
    client.query({ text: request.text, name: request.name, values: request.params as unknown[] | undefined }).then(
      (result) => reply({ id: request.id, result: { rows: result.rows, rowCount: result.rowCount, command: result.command } }),
      (err: unknown) => reply({ id: request.id, error: errorFields(err) }),
    );
  });
  reply({ ready: true });
}

void open();
