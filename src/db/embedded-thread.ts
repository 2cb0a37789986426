/**
 * The embedded database's thread. PGlite is PostgreSQL compiled to WebAssembly: it runs on the thread that calls
 * it, and on the service's own thread every claim, outcome batch and VACUUM stopped the HTTP work. Here it runs
 * beside it, so a 2-core machine uses both cores (see openEmbedded for the figures). Statements arrive in the order
 * the service sent them and run one after another on PGlite's one session, through the same node-postgres adapter
 * and type parsers as PostgreSQL, so rows come back exactly as `pg` would give them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { errorFields, type OpenRequest, type ThreadReply, type ThreadRequest } from './embedded-protocol.js';
import { typeParsers } from './type-parsers.js';

const port = parentPort!;
const reply = (message: ThreadReply) => port.postMessage(message);

async function open(): Promise<void> {
  const { pgdata } = workerData as OpenRequest;
  let pglite: PGlite;
  let client: pg.PoolClient;
  let pool: pg.Pool;
  try {
    pglite = await PGlite.create(pgdata);
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
    // Not awaited: the client queues statements in arrival order, and the next one is handed over at once.
    client.query(request.text, request.params as unknown[] | undefined).then(
      (result) => reply({ id: request.id, result: { rows: result.rows, rowCount: result.rowCount, command: result.command } }),
      (err: unknown) => reply({ id: request.id, error: errorFields(err) }),
    );
  });
  reply({ ready: true });
}

void open();
