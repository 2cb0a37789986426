import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { findWebhookEndpoints } from '../webhooks/webhooks.js';
import { createSigningKey } from './signer.js';

/** Where a webhook's attempts go, and its secret made into a signing key once. */
export interface SigningEndpoint {
  url: string;
  key: KeyObject;
}

/** Webhooks never change after creation, so their endpoint and signing key are kept once loaded. */
export class EndpointCache {
  #endpoints = new Map<number, SigningEndpoint>();

  constructor(private readonly db: Queryable) {}

  /** Undefined when the webhook was not loaded: it is gone (deleted with its deliveries). */
  get(webhookId: number): SigningEndpoint | undefined {
    return this.#endpoints.get(webhookId);
  }

  /** Loads the endpoints of those webhooks not loaded yet, in one query. */
  async load(webhookIds: Iterable<number>): Promise<void> {
    const missing = [...new Set(webhookIds)].filter((id) => !this.#endpoints.has(id));
    if (missing.length === 0) return;
    for (const [id, endpoint] of await findWebhookEndpoints(this.db, missing)) {
      this.#endpoints.set(id, { url: endpoint.url, key: createSigningKey(endpoint.secret) });
    }
  }
}
