import type { Database, Queryable } from '../db/database.js';
import { SecretsKeyError, type Keyring } from '../secrets/keyring.js';
import { needsResealing, openSecret, SealedSecretError, sealSecret } from '../secrets/secret-box.js';
import { graphPasswordKeyIds } from '../sources/graph-password-sealing.js';

/**
 * The secret columns as a whole: sealing the plain secrets an older version stored (at start), checking this
 * process has the keys of what is sealed (at start, and before a rekey), and sealing again under the current key
 * (`rekey`). With src/webhooks/webhooks.ts, the only code that reads or writes `secret`, `secret_sealed`,
 * `previous_secret` and `previous_secret_sealed`.
 *
 * Each batch is one transaction over at most BATCH_SIZE rows taken FOR UPDATE SKIP LOCKED: processes starting at
 * once (or a rekey beside running services) share the rows rather than wait for each other, and no transaction
 * holds many rows for long. The rows skipped were locked by someone else; they are taken afterwards one per
 * transaction, waiting for that lock: a transaction holding a single row lock and waiting for nothing else cannot
 * be part of a deadlock, whatever order the other holder (the outcome writer, a PATCH) takes its rows in.
 *
 * Neither sealing nor rekeying moves `version`: the secret itself is the same, so the keys endpoint caches made
 * from it stay right, and no worker reloads anything.
 */
export const BATCH_SIZE = 100;

/** A webhook with a secret sealed under another key than $1 (the current key's id). */
const UNDER_ANOTHER_KEY = `split_part(secret_sealed, ':', 2) <> $1 OR split_part(previous_secret_sealed, ':', 2) <> $1`;
/** A webhook with a secret stored in clear (written before migration 0006). */
const STORED_IN_CLEAR = 'secret IS NOT NULL OR previous_secret IS NOT NULL';

type Batch = (tx: Queryable, limit: number, skipLocked: 'SKIP LOCKED' | '') => Promise<number>;

/**
 * Runs `batch` until no webhook `where` selects is left, as the top of this file says: BATCH_SIZE rows a
 * transaction passing over locked ones, then those one per transaction, waiting for their locks. Answers the sum of
 * what the batches answered (the rows they took).
 */
async function inBatches(db: Database, where: string, params: unknown[], batch: Batch): Promise<number> {
  let taken = 0;
  for (;;) {
    const n = await db.transaction((tx) => batch(tx, BATCH_SIZE, 'SKIP LOCKED'));
    if (n === 0) break;
    taken += n;
  }
  for (;;) {
    const { rows } = await db.query<{ found: boolean }>(`SELECT EXISTS (SELECT 1 FROM webhooks WHERE ${where}) AS found`, params);
    if (rows[0]?.found !== true) return taken;
    taken += await db.transaction((tx) => batch(tx, 1, ''));
  }
}

/**
 * Seals every secret still stored in clear (a database written before migration 0006) under the current key, and
 * empties its plain column. A plain previous secret whose overlap is over signs nothing: it is dropped, not sealed.
 * Answers how many webhooks it sealed. Idempotent; when it returns, no plain secret is left.
 */
export async function sealPlainSecrets(db: Database, keyring: Keyring): Promise<number> {
  return inBatches(db, STORED_IN_CLEAR, [], (tx, limit, skipLocked) => sealBatch(tx, keyring, limit, skipLocked));
}

async function sealBatch(tx: Queryable, keyring: Keyring, limit: number, skipLocked: 'SKIP LOCKED' | ''): Promise<number> {
  const { rows } = await tx.query<{ id: number; secret: string | null; previous_secret: string | null; previous_live: boolean }>(
    `SELECT id, secret, previous_secret, COALESCE(previous_secret_expires_at > now(), false) AS previous_live FROM webhooks
     WHERE ${STORED_IN_CLEAR} ORDER BY id LIMIT $1 FOR UPDATE ${skipLocked}`,
    [limit],
  );
  if (rows.length === 0) return 0;
  // A column whose plain value is NULL keeps its sealed value (COALESCE, CASE): only plain values are moved.
  await tx.query(
    `UPDATE webhooks w SET
       secret_sealed = COALESCE(s.secret_sealed, w.secret_sealed), secret = NULL,
       previous_secret_sealed = CASE WHEN w.previous_secret IS NULL THEN w.previous_secret_sealed ELSE s.previous_secret_sealed END,
       previous_secret = NULL
     FROM unnest($1::int[], $2::text[], $3::text[]) AS s(id, secret_sealed, previous_secret_sealed)
     WHERE w.id = s.id`,
    [
      rows.map((r) => r.id),
      rows.map((r) => (r.secret === null ? null : sealSecret(r.secret, keyring))),
      rows.map((r) => (r.previous_secret !== null && r.previous_live ? sealSecret(r.previous_secret, keyring) : null)),
    ],
  );
  return rows.length;
}

/** For each key id something still in use (a secret, a previous secret whose overlap runs) is sealed under: how many webhooks. */
export async function sealingKeyIds(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ key_id: string; webhooks: number }>(
    `SELECT key_id, count(DISTINCT id)::int AS webhooks FROM (
       SELECT id, split_part(secret_sealed, ':', 2) AS key_id FROM webhooks WHERE secret_sealed IS NOT NULL
       UNION ALL
       SELECT id, split_part(previous_secret_sealed, ':', 2) FROM webhooks
       WHERE previous_secret_sealed IS NOT NULL AND previous_secret_expires_at > now()
     ) sealed GROUP BY key_id ORDER BY key_id`,
  );
  return new Map(rows.map((r) => [r.key_id, r.webhooks]));
}

/**
 * Refuses (SecretsKeyError, one line naming key ids, never a key) when a secret in use is sealed under a key this
 * process does not have: a webhook's secret, or a data source's Bolt password (src/sources/graph-password-sealing.ts).
 * A process started with the wrong SECRETS_KEY (or a new DATA_DIR/secrets.key beside an old database) could not sign
 * a single delivery nor reach those graphs, and would only fail them one by one. `origin` says where the current key
 * came from; `advice` what to do about it.
 */
export async function requireSealingKeys(db: Queryable, keyring: Keyring, { origin, advice }: { origin: string; advice: string }): Promise<void> {
  const known = new Set([keyring.current.id, keyring.previous?.id]);
  const webhooks = await sealingKeyIds(db);
  const sources = await graphPasswordKeyIds(db);
  const unknown = [...new Set([...webhooks.keys(), ...sources.keys()])].filter((id) => !known.has(id)).sort();
  if (unknown.length === 0) return;
  const count = (n: number | undefined, one: string, many: string) => (n ? [`${n} ${n === 1 ? one : many}`] : []);
  const sealed = unknown.map((id) => `${id} (${[...count(webhooks.get(id), 'webhook', 'webhooks'), ...count(sources.get(id), 'data source', 'data sources')].join(', ')})`).join(', ');
  const what = [...(unknown.some((id) => webhooks.has(id)) ? ['webhook secrets'] : []), ...(unknown.some((id) => sources.has(id)) ? ['data source passwords'] : [])].join(' and ');
  const previous = keyring.previous === undefined ? 'SECRETS_KEY_PREVIOUS is unset' : `SECRETS_KEY_PREVIOUS is key ${keyring.previous.id}`;
  throw new SecretsKeyError(
    `${what} are sealed under key ${sealed}, which this process does not have: its key is ${keyring.current.id} (from ${origin}) and ${previous}. ${advice}`,
  );
}

export interface Rekeyed {
  /** Sealed values sealed again under the current key (a webhook may have two: its secret and its previous one). */
  resealed: number;
  /** Previous secrets under another key whose overlap was over: dropped, since they sign nothing. */
  dropped: number;
  /** Webhooks still holding a secret under another key or in clear: changed while this ran (run it again). */
  remaining: number;
}

/**
 * `rekey`: every secret sealed under another key than the current one (which the keyring's previous key opens) is
 * sealed again under the current key. Safe beside running services (see the top of this file); running it again
 * re-seals nothing twice. A value that does not open stops it with SealedSecretError, naming the webhook and key
 * ids; the batches before stay done.
 */
export async function resealSecrets(db: Database, keyring: Keyring): Promise<Rekeyed> {
  const done: Rekeyed = { resealed: 0, dropped: 0, remaining: 0 };
  await inBatches(db, UNDER_ANOTHER_KEY, [keyring.current.id], (tx, limit, skipLocked) => resealBatch(tx, keyring, limit, skipLocked, done));
  const { rows } = await db.query<{ remaining: number }>(
    `SELECT count(*)::int AS remaining FROM webhooks WHERE ${UNDER_ANOTHER_KEY} OR ${STORED_IN_CLEAR}`,
    [keyring.current.id],
  );
  done.remaining = rows[0]?.remaining ?? 0;
  return done;
}

async function resealBatch(tx: Queryable, keyring: Keyring, limit: number, skipLocked: 'SKIP LOCKED' | '', done: Rekeyed): Promise<number> {
  const { rows } = await tx.query<{ id: number; secret_sealed: string | null; previous_secret_sealed: string | null; previous_live: boolean }>(
    `SELECT id, secret_sealed, previous_secret_sealed, COALESCE(previous_secret_expires_at > now(), false) AS previous_live FROM webhooks
     WHERE ${UNDER_ANOTHER_KEY}
     ORDER BY id LIMIT $2 FOR UPDATE ${skipLocked}`,
    [keyring.current.id, limit],
  );
  if (rows.length === 0) return 0;
  const reseal = (id: number, sealed: string): string => {
    try {
      const again = sealSecret(openSecret(sealed, keyring), keyring);
      done.resealed++;
      return again;
    } catch (err) {
      if (err instanceof SealedSecretError) throw new SealedSecretError(`webhook ${id}: ${err.message}`, { cause: err });
      throw err;
    }
  };
  const secrets = rows.map((r) => (r.secret_sealed !== null && needsResealing(r.secret_sealed, keyring) ? reseal(r.id, r.secret_sealed) : r.secret_sealed));
  const previous = rows.map((r) => {
    if (r.previous_secret_sealed === null || !needsResealing(r.previous_secret_sealed, keyring)) return r.previous_secret_sealed;
    if (r.previous_live) return reseal(r.id, r.previous_secret_sealed);
    done.dropped++;
    return null;
  });
  await tx.query(
    `UPDATE webhooks w SET secret_sealed = s.secret_sealed, previous_secret_sealed = s.previous_secret_sealed
     FROM unnest($1::int[], $2::text[], $3::text[]) AS s(id, secret_sealed, previous_secret_sealed)
     WHERE w.id = s.id`,
    [rows.map((r) => r.id), secrets, previous],
  );
  return rows.length;
}
