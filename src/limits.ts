/**
 * Installation-wide limits that keep one call from doing unbounded work (docs/security.md lists them). Each is
 * checked before any work starts and refused with a `{key, message}` that names the limit.
 */

/**
 * Webhooks one installation may have. Every event may fan out to each, and MAX_DELIVERIES_PER_CALL bounds that
 * work per call; a claim costs nothing per idle webhook (it visits only webhooks with pending deliveries), so many
 * mostly idle webhooks (one per customer, per team) cost only their rows.
 */
export const MAX_WEBHOOKS = 10_000;

/**
 * Deliveries one call may create (matches × subscribed webhooks). Measured on 2 cores: 10,000 deliveries take
 * 160–260 ms on PostgreSQL and 370–590 ms on PGlite in one transaction, so this keeps a call to a few seconds and
 * its transaction's growth of the database to tens of megabytes; 2,000,000 took 25 s and 1.3 GB.
 */
export const MAX_DELIVERIES_PER_CALL = 50_000;

/**
 * Deliveries one alert run may record (new matches × the webhooks subscribed to newCase or newMatch on its source):
 * the same bound as a call's, for the same reason, and more: a run records in one transaction, which holds the
 * alert's lock and, on the embedded database, its one session, so every API call waits for it. Past it the run
 * stops recording and says so (`max_deliveries_reached`); the matches it left are new to the next run.
 */
export const MAX_DELIVERIES_PER_RUN = MAX_DELIVERIES_PER_CALL;

/**
 * What of a receiver's answer headers each attempt keeps in its delivery's attempt log (the receiver chooses them, so
 * they are bounded like the body's first 4 KiB): at most `count` headers, each value cut at `valueChars`,
 * `totalChars` in all (names and values).
 */
export const RECORDED_RESPONSE_HEADERS = { count: 40, valueChars: 512, totalChars: 4096 } as const;
