import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Keyring } from '../secrets/keyring.js';
import { openSecret, SealedSecretError } from '../secrets/secret-box.js';
import { findWebhookEndpoints } from '../webhooks/webhooks.js';
import { createSigningKey } from './signer.js';

/** Where a webhook's attempts go, and its secrets made into signing keys once. */
export interface SigningEndpoint {
  url: string;
  key: KeyObject;
  /** The secret before the last rotation: it signs besides `key` until `expiresAt` (epoch ms). */
  previous?: { key: KeyObject; expiresAt: number };
  version: number;
}

/** The keys an attempt made at `now` signs with: the current one, and the previous one while its overlap runs. */
export function signingKeys(endpoint: SigningEndpoint, now: number): KeyObject[] {
  return endpoint.previous !== undefined && now < endpoint.previous.expiresAt ? [endpoint.key, endpoint.previous.key] : [endpoint.key];
}

/**
 * The endpoints this process sends to, loaded once and kept until their webhook changes. A webhook's `version`
 * moves with every change of its URL or secrets, and every claim answers the version of each delivery's webhook
 * (claimDueDeliveries): an endpoint whose version moved is read again before anything is sent with it. So a change
 * made through any process is used from the first claim after it, with no NOTIFY to miss and no polling; an
 * unchanged webhook costs nothing.
 */
export class EndpointCache {
  #endpoints = new Map<number, SigningEndpoint>();

  constructor(
    private readonly db: Queryable,
    private readonly keyring: Keyring,
  ) {}

  /** Undefined when the webhook was not loaded: it is gone (deleted with its deliveries). */
  get(webhookId: number): SigningEndpoint | undefined {
    return this.#endpoints.get(webhookId);
  }

  /**
   * Loads, in one query, the endpoints of the claimed deliveries' webhooks that are not loaded yet or whose version
   * moved since they were. Answers the webhooks whose secrets this process cannot open, with why (see reload).
   */
  async load(claimed: Iterable<{ webhookId: number; webhookVersion: number }>): Promise<Map<number, string>> {
    const stale = new Set<number>();
    for (const { webhookId, webhookVersion } of claimed) {
      const cached = this.#endpoints.get(webhookId);
      if (cached === undefined || cached.version < webhookVersion) stale.add(webhookId);
    }
    return this.reload(stale);
  }

  /**
   * Reads these endpoints now, whatever is cached (a ping: it comes with no claim). A webhook gone is forgotten.
   * A webhook whose secret this process cannot open (sealed under a key it lacks, during a rolling key change) is
   * left unloaded and answered with the reason, naming key ids only: it holds back that webhook alone.
   */
  async reload(webhookIds: Iterable<number>): Promise<Map<number, string>> {
    const unreadable = new Map<number, string>();
    const ids = [...new Set(webhookIds)];
    if (ids.length === 0) return unreadable;
    const found = await findWebhookEndpoints(this.db, ids);
    for (const id of ids) {
      const endpoint = found.get(id);
      if (endpoint === undefined) {
        this.#endpoints.delete(id);
        continue;
      }
      // Opened here, and kept only as signing keys: the plain secret lives in this process's memory alone.
      try {
        const signing: SigningEndpoint = { url: endpoint.url, key: createSigningKey(openSecret(endpoint.sealedSecret, this.keyring)), version: endpoint.version };
        if (endpoint.previousSecret !== undefined) {
          signing.previous = { key: createSigningKey(openSecret(endpoint.previousSecret.sealedSecret, this.keyring)), expiresAt: endpoint.previousSecret.expiresAt };
        }
        this.#endpoints.set(id, signing);
      } catch (err) {
        if (!(err instanceof SealedSecretError)) throw err;
        this.#endpoints.delete(id);
        unreadable.set(id, err.message);
      }
    }
    return unreadable;
  }
}
