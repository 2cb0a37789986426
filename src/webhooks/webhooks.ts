import { randomBytes } from 'node:crypto';
import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database, Queryable } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { MAX_WEBHOOKS } from '../limits.js';
import type { ReceiverPolicy } from '../network/receiver-policy.js';
import { checkReceiverUrlAgainstPolicy } from '../network/receiver-url-check.js';
import { LKE_EVENT_TYPES, SOURCELESS_EVENT_TYPES, type EventType } from '../outbox/schemas.js';
import { purgeWebhookDeliveries } from '../outbox/purge.js';
import { countDeliveriesByStatus } from '../outbox/read-model.js';
import type { Keyring } from '../secrets/keyring.js';
import { sealSecret } from '../secrets/secret-box.js';
import { requireDataSources } from '../sources/sources.js';
import type { SecretRotation, Webhook, WebhookDetails, WebhookEvent } from './schemas.js';

export type { SecretRotation, Webhook, WebhookDetails, WebhookEvent } from './schemas.js';

/**
 * Where a webhook's deliveries go and the secrets they are signed with, sealed as stored (src/secrets/secret-box.ts):
 * the endpoint cache opens them, so a plain secret is only ever in the memory of the process that signs. Every read
 * and write of the secret columns is in this file and in src/webhooks/secret-sealing.ts (sealing at start, rekey).
 */
export interface WebhookEndpoint {
  url: string;
  sealedSecret: string;
  /** The secret before the last rotation, while its overlap runs: it signs too, until `expiresAt` (epoch ms). */
  previousSecret?: { sealedSecret: string; expiresAt: number };
  /** Moved by every change of the above (and of `enabled`): see claimDueDeliveries. */
  version: number;
}

export const MAX_URL_LENGTH = 2048;
export const MAX_SECRET_LENGTH = 1024;
/**
 * New secrets only: a short secret is guessable offline from one signed payload. Secrets stored before this
 * rule keep working, since nothing checks a secret's length when signing.
 */
export const MIN_SECRET_LENGTH = 16;
export const MAX_DESCRIPTION_LENGTH = 500;
/** How long the previous secret keeps signing after a rotation, unless told: a day, for receivers to move. */
export const DEFAULT_SECRET_OVERLAP_MS = 86_400_000;
export const MAX_SECRET_OVERLAP_MS = 604_800_000;

/**
 * Different characters a new secret must have at least: refuses `aaaa…`, `abab…`, `1212…`. A random secret passes
 * whatever its alphabet: 16 hex digits have fewer than 6 different ones about 3 times in 100,000.
 */
export const MIN_SECRET_DISTINCT_CHARACTERS = 6;

/**
 * A new secret (creation, rotation, typed by an admin or generated), counted in characters (code points), as the
 * route schemas count them. Each refusal names the rule and never the secret.
 */
export function checkSecret(secret: string): string {
  const characters = [...secret];
  if (characters.length < MIN_SECRET_LENGTH) throw invalidParameter(`secret must be at least ${MIN_SECRET_LENGTH} characters long`, 'secret');
  if (characters.length > MAX_SECRET_LENGTH) throw invalidParameter(`secret must be at most ${MAX_SECRET_LENGTH} characters long`, 'secret');
  // Both would sign with bytes the receiver's copy likely lacks: a paste that took a line break along, a tab.
  if (secret.trim() !== secret) throw invalidParameter('secret must not start or end with a space or a line break (a copy-and-paste slip?)', 'secret');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(secret)) throw invalidParameter('secret must not contain control characters such as a tab or a line break', 'secret');
  if (new Set(characters).size < MIN_SECRET_DISTINCT_CHARACTERS) {
    throw invalidParameter(
      `secret must have at least ${MIN_SECRET_DISTINCT_CHARACTERS} different characters: this one is easy to guess (generate one with: openssl rand -base64 32)`,
      'secret',
    );
  }
  return secret;
}

export function checkDescription(description: string): string {
  if ([...description].length > MAX_DESCRIPTION_LENGTH) throw invalidParameter(`description must be at most ${MAX_DESCRIPTION_LENGTH} characters long`, 'description');
  return description;
}

export function checkReceiverUrl(url: string): string {
  if (url.length > MAX_URL_LENGTH) throw invalidParameter(`url must be at most ${MAX_URL_LENGTH} characters`, 'url');
  // The URL parser drops tabs and line breaks and trims spaces without a word, so a URL holding them was stored and
  // shown as given while another was used: refused instead, as is anything it would silently rewrite that way.
  if (hasControlCharacter(url) || url.trim() !== url) {
    throw invalidParameter('url must not contain control characters (CR, LF, tab…) or begin or end with spaces; percent-encode them', 'url');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidParameter(`url "${url}" is not an absolute URL`, 'url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidParameter(`url must be http or https, got ${parsed.protocol.slice(0, -1)}`, 'url');
  // An empty user part (`http://@host/`) parses to no username, but is one all the same.
  if (parsed.username || parsed.password || authorityOf(url).includes('@')) {
    throw invalidParameter('url must not contain a user:password part; authenticate receivers with the secret', 'url');
  }
  if (parsed.port === '0') throw invalidParameter('url port must be from 1 to 65535, got 0', 'url');
  return url;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** What stands between `scheme://` and the path, query or fragment of `url`, as written. */
function authorityOf(url: string): string {
  const rest = url.slice(url.indexOf(':') + 1).replace(/^[/\\]*/, '');
  const end = rest.search(/[/\\?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/**
 * Left out means the three Linkurious Enterprise event types on any data source (never webhookDisabled: an LKE
 * client gets what it always got); duplicates are merged, first occurrence kept. A sourceKey on an event that has
 * none (webhookDisabled) is refused rather than kept as an entry that could never match.
 */
export function normaliseEvents(events: WebhookEvent[] | undefined): WebhookEvent[] {
  if (events === undefined) return LKE_EVENT_TYPES.map((eventType) => ({ eventType }));
  if (events.length === 0) throw invalidParameter('events must have at least 1 item (leave it out to subscribe to every event)', 'events');
  const seen = new Set<string>();
  const merged: WebhookEvent[] = [];
  for (const [i, event] of events.entries()) {
    if (event.sourceKey !== undefined && SOURCELESS_EVENT_TYPES.includes(event.eventType)) {
      throw invalidParameter(`events[${i}].sourceKey must be left out for ${event.eventType}: that event belongs to no data source`, `events[${i}].sourceKey`);
    }
    const key = `${event.eventType}\0${event.sourceKey ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(event.sourceKey === undefined ? { eventType: event.eventType } : { eventType: event.eventType, sourceKey: event.sourceKey });
  }
  return merged;
}

export interface NewWebhook {
  url: string;
  secret: string;
  events?: WebhookEvent[] | undefined;
  description?: string | undefined;
}

export async function createWebhook(
  db: Database,
  input: NewWebhook,
  { receiverPolicy, keyring }: { receiverPolicy: ReceiverPolicy; keyring: Keyring },
): Promise<Webhook> {
  const url = checkReceiverUrl(input.url);
  const sealedSecret = sealSecret(checkSecret(input.secret), keyring);
  const description = checkDescription(input.description ?? '');
  const events = normaliseEvents(input.events);
  // Before the transaction: it may wait for DNS, and holds no lock meanwhile.
  await checkReceiverUrlAgainstPolicy(url, receiverPolicy);
  const id = await db.transaction(async (tx) => {
    // Counted under a lock held to the commit, so two creations at once cannot both see room for one more.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [AdvisoryLock.webhookCreation]);
    const { rows: counted } = await tx.query<{ total: number }>('SELECT count(*) AS total FROM webhooks');
    if ((counted[0]?.total ?? 0) >= MAX_WEBHOOKS) {
      throw invalidParameter(`an installation may have at most ${MAX_WEBHOOKS} webhooks (every event is sent to each): delete one before adding another`);
    }
    await requireDataSources(tx, events.flatMap((e) => (e.sourceKey === undefined ? [] : [e.sourceKey])));
    const { rows } = await tx.query<{ id: number }>('INSERT INTO webhooks (url, secret_sealed, description) VALUES ($1, $2, $3) RETURNING id', [url, sealedSecret, description]);
    const webhookId = rows[0]!.id;
    await writeSubscriptions(tx, webhookId, events);
    return webhookId;
  });
  return (await listWebhooks(db, id))[0]!;
}

async function writeSubscriptions(tx: Queryable, webhookId: number, events: readonly WebhookEvent[]): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_subscriptions (webhook_id, position, event_type, source_key)
     SELECT $1, position - 1, event_type, source_key FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(event_type, source_key, position)`,
    [webhookId, events.map((e) => e.eventType), events.map((e) => e.sourceKey ?? null)],
  );
}

export interface WebhookChange {
  url?: string | undefined;
  events?: WebhookEvent[] | undefined;
  enabled?: boolean | undefined;
  description?: string | undefined;
}

/**
 * Changes any of url, events, enabled and description, each checked as at creation, all or nothing. New events
 * and a new URL apply to what happens from then on: recorded deliveries keep their payload, and go to the URL the
 * webhook has when they are attempted. Disabling records who did it (`by <username>`); enabling sends what waited,
 * and starts the failure count afresh, as does a new URL (the failures were the old receiver's).
 */
export async function updateWebhook(
  db: Database,
  id: number,
  change: WebhookChange,
  { receiverPolicy, actor }: { receiverPolicy: ReceiverPolicy; actor: string },
): Promise<WebhookDetails> {
  const url = change.url === undefined ? undefined : checkReceiverUrl(change.url);
  const events = change.events === undefined ? undefined : normaliseEvents(change.events);
  const description = change.description === undefined ? undefined : checkDescription(change.description);
  const enabled = change.enabled;
  if (url !== undefined && url !== (await readUrl(db, id))) await checkReceiverUrlAgainstPolicy(url, receiverPolicy);
  if (url !== undefined || events !== undefined || description !== undefined || enabled !== undefined) {
    await db.transaction(async (tx) => {
      const { rows } = await tx.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [id]);
      if (rows.length === 0) throw notFound('webhook', id);
      if (events !== undefined) {
        await requireDataSources(tx, events.flatMap((e) => (e.sourceKey === undefined ? [] : [e.sourceKey])));
        await tx.query('DELETE FROM webhook_subscriptions WHERE webhook_id = $1', [id]);
        await writeSubscriptions(tx, id, events);
      }
      // Every SET expression reads the row as it was: `enabled` there is the value before this change.
      await tx.query(
        `UPDATE webhooks SET
           url = COALESCE($2, url),
           description = COALESCE($3, description),
           enabled = COALESCE($4, enabled),
           disabled_at = CASE WHEN $4::boolean IS NULL THEN disabled_at WHEN $4 THEN NULL WHEN enabled THEN now() ELSE disabled_at END,
           disabled_reason = CASE WHEN $4::boolean IS NULL THEN disabled_reason WHEN $4 THEN NULL WHEN enabled THEN $5 ELSE disabled_reason END,
           failing_since = CASE WHEN ($4 AND NOT enabled) OR $2 <> url THEN NULL ELSE failing_since END,
           version = version + 1,
           updated_at = now()
         WHERE id = $1`,
        [id, url ?? null, description ?? null, enabled ?? null, `by ${actor}`],
      );
    });
  }
  return findWebhook(db, id);
}

async function readUrl(db: Queryable, id: number): Promise<string> {
  const { rows } = await db.query<{ url: string }>('SELECT url FROM webhooks WHERE id = $1', [id]);
  if (!rows[0]) throw notFound('webhook', id);
  return rows[0].url;
}

/**
 * Sets a new secret (the one given, or 32 random bytes as base64url, answered once) and keeps the current one
 * signing for `overlapMs` besides it (0: dropped at once). A rotation during an overlap drops the older secret:
 * two secrets at most sign a delivery. No `whsec_` prefix on a generated secret: both signatures key on the
 * secret's UTF-8 bytes, and Standard Webhooks libraries would strip such a prefix and base64-decode the rest.
 * The new secret is sealed under the current key; the current one becomes the previous one still sealed as it
 * was (under the key its id names, which `rekey` takes care of): nothing is opened.
 */
export async function rotateWebhookSecret(
  db: Queryable,
  id: number,
  { secret, overlapMs = DEFAULT_SECRET_OVERLAP_MS }: { secret?: string | undefined; overlapMs?: number | undefined },
  { keyring }: { keyring: Keyring },
): Promise<SecretRotation> {
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_SECRET_OVERLAP_MS) {
    throw invalidParameter(`overlapMs must be an integer from 0 to ${MAX_SECRET_OVERLAP_MS} (7 days)`, 'overlapMs');
  }
  const next = secret === undefined ? randomBytes(32).toString('base64url') : checkSecret(secret);
  // `secret_sealed` on the right-hand side is the current one: every SET expression reads the row as it was. The
  // plain columns are emptied for good measure: the start sealed them all (src/webhooks/secret-sealing.ts).
  const { rows } = await db.query<{ previous_secret_expires_at: Date | null }>(
    `UPDATE webhooks SET
       previous_secret_sealed = CASE WHEN $3::float8 > 0 THEN secret_sealed END,
       previous_secret_expires_at = CASE WHEN $3::float8 > 0 THEN now() + $3::float8 * interval '1 millisecond' END,
       secret_sealed = $2, secret = NULL, previous_secret = NULL, version = version + 1, updated_at = now()
     WHERE id = $1 RETURNING previous_secret_expires_at`,
    [id, sealSecret(next, keyring), overlapMs],
  );
  if (!rows[0]) throw notFound('webhook', id);
  const previousSecretExpiresAt = rows[0].previous_secret_expires_at?.toISOString() ?? null;
  return secret === undefined ? { webhookId: id, secret: next, previousSecretExpiresAt } : { webhookId: id, previousSecretExpiresAt };
}

interface WebhookRow {
  id: number;
  url: string;
  description: string;
  enabled: boolean;
  disabled_at: Date | null;
  disabled_reason: string | null;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  events: { eventType: EventType; sourceKey: string | null }[];
}

/** Oldest first: all of them, one page of them, or the one webhook `id`. */
export async function listWebhooks(db: Queryable, id?: number, page?: { offset: number; limit: number }, matching?: string): Promise<Webhook[]> {
  const { rows } = await db.query<WebhookRow>(
    `SELECT w.id, w.url, w.description, w.enabled, w.disabled_at, w.disabled_reason, w.failing_since, w.created_at, w.updated_at,
            CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('eventType', s.event_type, 'sourceKey', s.source_key) ORDER BY s.position)
                      FROM webhook_subscriptions s WHERE s.webhook_id = w.id), '[]') AS events
     FROM webhooks w WHERE ($1::int IS NULL OR w.id = $1) AND ${MATCHING_URL_OR_DESCRIPTION('$4')} ORDER BY w.id OFFSET $2 LIMIT $3`,
    [id ?? null, page?.offset ?? 0, page?.limit ?? null, likePattern(matching)],
  );
  return rows.map((row) => ({
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events.map((e) => (e.sourceKey === null ? { eventType: e.eventType } : { eventType: e.eventType, sourceKey: e.sourceKey })),
    enabled: row.enabled,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since?.toISOString() ?? null,
    previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

/** One webhook with its delivery counts by status; 404 when it does not exist. */
export async function findWebhook(db: Queryable, id: number): Promise<WebhookDetails> {
  const webhook = (await listWebhooks(db, id))[0];
  if (!webhook) throw notFound('webhook', id);
  return { ...webhook, deliveryCounts: await countDeliveriesByStatus(db, id) };
}

/**
 * The endpoints of those of `ids` that exist, with their sealed secrets, for signing: the previous secret only while
 * its overlap runs.
 */
export async function findWebhookEndpoints(db: Queryable, ids: readonly number[]): Promise<Map<number, WebhookEndpoint>> {
  const { rows } = await db.query<{
    id: number;
    url: string;
    secret_sealed: string;
    version: number;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: Date | null;
  }>(
    `SELECT id, url, secret_sealed, version, previous_secret_sealed, previous_secret_expires_at FROM webhooks
     WHERE id = ANY($1::int[])`,
    [ids],
  );
  return new Map(
    rows.map((r) => {
      const endpoint: WebhookEndpoint = { url: r.url, sealedSecret: r.secret_sealed, version: r.version };
      const expiresAt = r.previous_secret_expires_at?.getTime();
      if (r.previous_secret_sealed !== null && expiresAt !== undefined && expiresAt > Date.now()) {
        endpoint.previousSecret = { sealedSecret: r.previous_secret_sealed, expiresAt };
      }
      return [r.id, endpoint];
    }),
  );
}

/** 404 unless the webhook exists. */
export async function requireWebhook(db: Queryable, id: number): Promise<void> {
  const { rows } = await db.query('SELECT 1 FROM webhooks WHERE id = $1', [id]);
  if (rows.length === 0) throw notFound('webhook', id);
}

/**
 * Deletes the webhook, its deliveries and the payloads no other delivery refers to, together (the delivery
 * table has no foreign keys to cascade). The deliveries go first: the outcome writer locks delivery rows and then
 * (when a webhook starts or stops failing) its webhook's row, so taking them in the same order cannot deadlock.
 */
export async function deleteWebhook(db: Database, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    await purgeWebhookDeliveries(tx, id);
    const { rowCount } = await tx.query('DELETE FROM webhooks WHERE id = $1', [id]);
    if (rowCount === 0) throw notFound('webhook', id);
  });
}

/** One page of the webhooks, oldest first, with how many there are in all. */
/**
 * One page of the webhooks, oldest first, with how many there are in all; only those whose URL or description
 * contains `matching` (in any case) when given. The webhooks are read whole to match: at most MAX_WEBHOOKS of them.
 */
export async function listWebhooksPage(
  db: Queryable,
  page: { offset: number; limit: number },
  matching?: string,
): Promise<{ totalCount: number; items: Webhook[] }> {
  const { rows } = await db.query<{ total: number }>(`SELECT count(*) AS total FROM webhooks w WHERE ${MATCHING_URL_OR_DESCRIPTION('$1')}`, [
    likePattern(matching),
  ]);
  return { totalCount: rows[0]?.total ?? 0, items: await listWebhooks(db, undefined, page, matching) };
}

/** The condition of a URL-or-description search on `webhooks w`, its LIKE pattern the parameter `p` (NULL: every webhook). */
const MATCHING_URL_OR_DESCRIPTION = (p: string) => `(${p}::text IS NULL OR w.url ILIKE ${p} OR w.description ILIKE ${p})`;

/** `50%_off` → `%50\%\_off%`: the text as it is, anywhere (LIKE's wildcards and its escape character taken literally). */
function likePattern(text: string | undefined): string | null {
  return text === undefined ? null : `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Which of `ids` are webhooks still (the others were deleted, in this process or another). */
export async function existingWebhookIds(db: Queryable, ids: readonly number[]): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM webhooks WHERE id = ANY($1::int[])', [ids]);
  return rows.map((row) => row.id);
}
