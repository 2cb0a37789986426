import type { Database, Queryable } from '../db/database.js';
import type { Keyring } from '../secrets/keyring.js';
import { needsResealing, openSecret, SealedSecretError, sealSecret } from '../secrets/secret-box.js';

/**
 * Data sources' Bolt passwords (data_sources.graph_password_sealed) as a whole, for the start-up key check and for
 * `rekey`, as src/webhooks/secret-sealing.ts does for webhook secrets. Data sources are few (one per graph): they
 * are re-sealed in one transaction, rows locked, rather than in batches. The password itself does not change, so
 * `updated_at` stays and the open graphs of running services are not reopened.
 */

/** A Bolt password sealed under another key than $1 (the current key's id). */
const UNDER_ANOTHER_KEY = `graph_password_sealed IS NOT NULL AND split_part(graph_password_sealed, ':', 2) <> $1`;

/** For each key id a data source's password is sealed under: how many data sources. */
export async function graphPasswordKeyIds(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ key_id: string; sources: number }>(
    `SELECT split_part(graph_password_sealed, ':', 2) AS key_id, count(*)::int AS sources FROM data_sources
     WHERE graph_password_sealed IS NOT NULL GROUP BY 1 ORDER BY 1`,
  );
  return new Map(rows.map((r) => [r.key_id, r.sources]));
}

/**
 * Seals every data source's password under another key again under the current key (which the keyring's previous
 * key opens). Answers how many; running it again re-seals nothing. A password that does not open stops it with
 * SealedSecretError naming the data source and key ids (never the password), and nothing is changed.
 */
export async function resealGraphPasswords(db: Database, keyring: Keyring): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ key: string; sealed: string }>(
      `SELECT key, graph_password_sealed AS sealed FROM data_sources WHERE ${UNDER_ANOTHER_KEY} ORDER BY key FOR UPDATE`,
      [keyring.current.id],
    );
    const resealed = rows.filter((r) => needsResealing(r.sealed, keyring)).map((r) => {
      try {
        return { key: r.key, sealed: sealSecret(openSecret(r.sealed, keyring), keyring) };
      } catch (err) {
        if (err instanceof SealedSecretError) throw new SealedSecretError(`data source "${r.key}": ${err.message}`, { cause: err });
        throw err;
      }
    });
    if (resealed.length === 0) return 0;
    await tx.query(
      `UPDATE data_sources d SET graph_password_sealed = s.sealed FROM unnest($1::text[], $2::text[]) AS s(key, sealed) WHERE d.key = s.key`,
      [resealed.map((r) => r.key), resealed.map((r) => r.sealed)],
    );
    return resealed.length;
  });
}
