import type { WebhookSettings } from '../settings/webhook-settings.js';
import type { Logger } from '../logger.js';
import type { AttemptRecord, ClaimedDelivery } from '../outbox/claims.js';
import type { AttemptLogEntry } from '../outbox/read-model.js';
import { signingKeys, type SigningEndpoint } from './endpoints.js';
import { decideAfterAttempt } from './retry-policy.js';
import type { DeliverySender } from './sender.js';
import { signPayload } from './signer.js';

export interface AttemptContext {
  sender: DeliverySender;
  /** Read at each attempt: the settings in force when it starts. */
  settings: Pick<WebhookSettings, 'requestTimeoutMs' | 'retryScheduleMs'>;
  log: Logger;
}

/**
 * One attempt of a claimed delivery: signs it, sends it, decides what comes next (see retry-policy) and builds its
 * attempt log entry. Writes nothing: the record is for the outcome writer. Never throws (the sender answers every
 * failure as an outcome).
 */
export async function attemptDelivery(delivery: ClaimedDelivery, endpoint: SigningEndpoint, { sender, settings, log }: AttemptContext): Promise<AttemptRecord> {
  const attemptedAt = Date.now();
  // Encoded once: both signatures and the request use these bytes (a string is encoded by each).
  const body = Buffer.from(delivery.payload, 'utf8');
  // During a secret rotation's overlap, signed with both secrets (see signPayload).
  const headers = signPayload(signingKeys(endpoint, attemptedAt), delivery.id, Math.floor(attemptedAt / 1000), body);
  const outcome = await sender.send({ url: endpoint.url, body, headers, timeoutMs: settings.requestTimeoutMs });
  const error = outcome.ok ? undefined : outcome.error;
  const decision = decideAfterAttempt(
    { ok: outcome.ok, attempt: delivery.attempts, isPing: delivery.isPing, retryAfterMs: outcome.ok ? undefined : outcome.retryAfterMs },
    settings.retryScheduleMs,
    Date.now(),
  );
  // The URL is kept with each attempt: the webhook's URL can change between two attempts of one delivery.
  const logEntry: AttemptLogEntry = { attemptedAt: new Date(attemptedAt).toISOString(), url: endpoint.url, durationMs: outcome.durationMs };
  if (outcome.timeToFirstByteMs !== undefined) logEntry.timeToFirstByteMs = outcome.timeToFirstByteMs;
  if (outcome.responseStatus !== undefined) logEntry.responseStatus = outcome.responseStatus;
  if (error !== undefined) logEntry.error = error;
  // The whole exchange, as sent and as answered (bounded by the sender); no secret is in it, only signatures.
  if (outcome.requestHeaders !== undefined) logEntry.requestHeaders = outcome.requestHeaders;
  if (outcome.responseHeaders !== undefined) logEntry.responseHeaders = outcome.responseHeaders;
  if (outcome.responseHeadersTruncated) logEntry.responseHeadersTruncated = true;
  if (outcome.responseBody !== undefined) logEntry.responseBody = outcome.responseBody;
  if (outcome.responseBodyTruncated) logEntry.responseBodyTruncated = true;
  // Guarded: the fields object would be built for every attempt, at info level too.
  if (log.isLevelEnabled('debug')) {
    log.debug(
      { deliveryId: delivery.id, webhookId: delivery.webhookId, attempt: delivery.attempts, outcome: decision.status, responseStatus: outcome.responseStatus, error, durationMs: outcome.durationMs },
      'delivery attempt',
    );
  }
  return {
    id: delivery.id,
    leaseToken: delivery.leaseToken,
    status: decision.status,
    nextAttemptAt: decision.status === 'pending' ? decision.nextAttemptAt : null,
    attemptedAt,
    responseStatus: outcome.responseStatus ?? null,
    error: error ?? null,
    logEntry,
  };
}
