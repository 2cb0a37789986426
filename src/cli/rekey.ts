import { loadKeyring } from '../secrets/keyring.js';
import { resealGraphPasswords } from '../sources/graph-password-sealing.js';
import { requireSealingKeys, resealSecrets, sealPlainSecrets } from '../webhooks/secret-sealing.js';
import { withAdminDatabase } from './admin-database.js';
import { OperatorError } from './startup-failures.js';
import { expectArgs, parseArgs } from './usage.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * `rekey`: after a new SECRETS_KEY (with the old one as SECRETS_KEY_PREVIOUS), every webhook secret sealed under
 * another key is sealed again under the new one, in batches (src/webhooks/secret-sealing.ts), and so is every data
 * source's Bolt password (src/sources/graph-password-sealing.ts). On PostgreSQL it runs
 * beside running services, which must already have both keys; on the embedded database with the service stopped
 * (docs/operations.md, "Changing the secrets key"). It reads the keys as `serve` does. Running it again re-seals
 * nothing twice. Exits 1 when a secret is under a key it was not given, or some were changed under it meanwhile.
 */
export async function rekey(args: readonly string[], print: (line: string) => void = console.log): Promise<void> {
  const { positional } = parseArgs(args);
  expectArgs(positional, 0, 0, 'rekey');
  await withAdminDatabase(undefined, async (db, config) => {
    const { keyring, origin, warnings } = await loadKeyring({ ...config, databaseKind: db.kind });
    for (const warning of warnings) console.error(`alert-webhooks: warning: ${warning}`);
    // Before anything is written: a key missing is said once, naming the key ids, rather than batch by batch.
    await requireSealingKeys(db, keyring, {
      origin,
      advice: 'Give rekey the key that sealed them as SECRETS_KEY_PREVIOUS, beside the new one as SECRETS_KEY (or SECRETS_KEY_FILE)',
    });
    const current = `key ${keyring.current.id} (from ${origin})`;
    const sealed = await sealPlainSecrets(db, keyring);
    if (sealed > 0) print(`${plural(sealed, 'webhook')} had secrets stored in clear: sealed under ${current}.`);
    const { resealed, dropped, remaining } = await resealSecrets(db, keyring);
    const droppedNote = dropped > 0 ? `, ${plural(dropped, 'expired previous secret')} dropped` : '';
    print(`${plural(resealed, 'secret')} re-sealed under ${current}${droppedNote}; ${plural(remaining, 'webhook')} left with a secret under another key.`);
    const passwords = await resealGraphPasswords(db, keyring);
    if (passwords > 0) print(`${plural(passwords, 'data source password')} re-sealed under ${current}.`);
    if (remaining > 0) throw new OperatorError(`${plural(remaining, 'webhook')} changed while rekey ran and still have a secret under another key: run rekey again.`);
  });
}
