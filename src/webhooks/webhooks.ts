import { requireDataSources } from '../sources/sources.js';
import { AdvisoryLock } from '../db/advisory-locks.js';
import type { Database, Queryable } from '../db/database.js';
import { invalidParameter, notFound } from '../errors.js';
import { MAX_WEBHOOKS } from '../limits.js';
import { EVENT_TYPES, type EventType } from '../outbox/events.js';
import { purgeWebhookDeliveries } from '../outbox/purge.js';

export interface WebhookEvent {
  eventType: EventType;
  sourceKey?: string;
}

/** A webhook as the API shows it: never its secret. */
export interface Webhook {
  id: number;
  url: string;
  events: WebhookEvent[];
  createdAt: string;
  updatedAt: string;
}

/** Where a webhook's deliveries go and the secret they are signed with. */
export interface WebhookEndpoint {
  url: string;
  secret: string;
}

export interface WebhookTarget extends WebhookEndpoint {
  id: number;
}

export const MAX_URL_LENGTH = 2048;
export const MAX_SECRET_LENGTH = 1024;
/**
 * New secrets only: a short secret is guessable offline from one signed payload. Secrets stored before this
 * rule keep working, since nothing checks a secret's length when signing.
 */
export const MIN_SECRET_LENGTH = 16;

export function checkReceiverUrl(url: string): string {
  if (url.length > MAX_URL_LENGTH) throw invalidParameter(`url must be at most ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidParameter(`url "${url}" is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidParameter(`url must be http or https, got ${parsed.protocol.slice(0, -1)}`);
  if (parsed.username || parsed.password) throw invalidParameter('url must not contain a user:password part; authenticate receivers with the secret');
  return url;
}

/** Left out means all three event types on any data source; duplicates are merged, first occurrence kept. */
export function normaliseEvents(events: WebhookEvent[] | undefined): WebhookEvent[] {
  if (events === undefined) return EVENT_TYPES.map((eventType) => ({ eventType }));
  if (events.length === 0) throw invalidParameter('events must have at least 1 item (leave it out to subscribe to every event)');
  const seen = new Set<string>();
  const merged: WebhookEvent[] = [];
  for (const event of events) {
    const key = `${event.eventType}\0${event.sourceKey ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(event.sourceKey === undefined ? { eventType: event.eventType } : { eventType: event.eventType, sourceKey: event.sourceKey });
  }
  return merged;
}

export async function createWebhook(db: Database, input: { url: string; secret: string; events?: WebhookEvent[] | undefined }): Promise<Webhook> {
  const url = checkReceiverUrl(input.url);
  // In characters (code points), as the route schema counts them.
  const secretLength = [...input.secret].length;
  if (secretLength < MIN_SECRET_LENGTH) throw invalidParameter(`secret must be at least ${MIN_SECRET_LENGTH} characters long`);
  if (secretLength > MAX_SECRET_LENGTH) throw invalidParameter(`secret must be at most ${MAX_SECRET_LENGTH} characters long`);
  const events = normaliseEvents(input.events);
  const id = await db.transaction(async (tx) => {
    // Counted under a lock held to the commit, so two creations at once cannot both see room for one more.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [AdvisoryLock.webhookCreation]);
    const { rows: counted } = await tx.query<{ total: number }>('SELECT count(*) AS total FROM webhooks');
    if ((counted[0]?.total ?? 0) >= MAX_WEBHOOKS) {
      throw invalidParameter(`an installation may have at most ${MAX_WEBHOOKS} webhooks (every event is sent to each): delete one before adding another`);
    }
    await requireDataSources(tx, events.flatMap((e) => (e.sourceKey === undefined ? [] : [e.sourceKey])));
    const { rows } = await tx.query<{ id: number }>('INSERT INTO webhooks (url, secret) VALUES ($1, $2) RETURNING id', [url, input.secret]);
    const webhookId = rows[0]!.id;
    await tx.query(
      `INSERT INTO webhook_subscriptions (webhook_id, position, event_type, source_key)
       SELECT $1, position - 1, event_type, source_key FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(event_type, source_key, position)`,
      [webhookId, events.map((e) => e.eventType), events.map((e) => e.sourceKey ?? null)],
    );
    return webhookId;
  });
  return (await listWebhooks(db, id))[0]!;
}

interface WebhookRow {
  id: number;
  url: string;
  created_at: Date;
  updated_at: Date;
  events: { eventType: EventType; sourceKey: string | null }[];
}

/** Oldest first: all of them, one page of them, or the one webhook `id`. */
export async function listWebhooks(db: Queryable, id?: number, page?: { offset: number; limit: number }): Promise<Webhook[]> {
  const { rows } = await db.query<WebhookRow>(
    `SELECT w.id, w.url, w.created_at, w.updated_at,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('eventType', s.event_type, 'sourceKey', s.source_key) ORDER BY s.position)
                      FROM webhook_subscriptions s WHERE s.webhook_id = w.id), '[]') AS events
     FROM webhooks w WHERE ($1::int IS NULL OR w.id = $1) ORDER BY w.id OFFSET $2 LIMIT $3`,
    [id ?? null, page?.offset ?? 0, page?.limit ?? null],
  );
  return rows.map((row) => ({
    id: row.id,
    url: row.url,
    events: row.events.map((e) => (e.sourceKey === null ? { eventType: e.eventType } : { eventType: e.eventType, sourceKey: e.sourceKey })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

/** The endpoints of those of `ids` that exist, with their secrets, for signing. */
export async function findWebhookEndpoints(db: Queryable, ids: readonly number[]): Promise<Map<number, WebhookEndpoint>> {
  const { rows } = await db.query<WebhookTarget>('SELECT id, url, secret FROM webhooks WHERE id = ANY($1::int[])', [ids]);
  return new Map(rows.map((r) => [r.id, { url: r.url, secret: r.secret }]));
}

/** The webhook with its secret, for signing; 404 when it does not exist. */
export async function findWebhookTarget(db: Queryable, id: number): Promise<WebhookTarget> {
  const endpoint = (await findWebhookEndpoints(db, [id])).get(id);
  if (!endpoint) throw notFound('webhook', id);
  return { id, ...endpoint };
}

/**
 * Deletes the webhook, its deliveries and the payloads no other delivery refers to, together (the delivery
 * table has no foreign keys to cascade).
 */
export async function deleteWebhook(db: Database, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const { rowCount } = await tx.query('DELETE FROM webhooks WHERE id = $1', [id]);
    if (rowCount === 0) throw notFound('webhook', id);
    await purgeWebhookDeliveries(tx, id);
  });
}

/** One page of the webhooks, oldest first, with how many there are in all. */
export async function listWebhooksPage(db: Queryable, page: { offset: number; limit: number }): Promise<{ totalCount: number; items: Webhook[] }> {
  const { rows } = await db.query<{ total: number }>('SELECT count(*) AS total FROM webhooks');
  return { totalCount: rows[0]?.total ?? 0, items: await listWebhooks(db, undefined, page) };
}
