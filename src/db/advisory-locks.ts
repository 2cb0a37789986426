/**
 * Every PostgreSQL advisory lock this service takes, in one place, so no two uses can collide. Whole-database
 * locks use the one-bigint key space; per-row locks use the two-int key space (`namespace`, `id`), which
 * PostgreSQL keeps apart from the first.
 */
export const AdvisoryLock = {
  /** Serialises migrations across processes starting at once. */
  migrations: 7_146_391_001,
  /** Serialises admin removals, so two cannot each see the other as the remaining admin. */
  adminRemoval: 7_146_391_002,
  /** Makes two processes starting on one empty database create one bootstrap admin between them. */
  bootstrap: 7_146_391_003,
  /** Lets one process at a time run cleanup. */
  cleanup: 7_146_391_004,
  /** Serialises webhook creations, so the count checked against MAX_WEBHOOKS cannot be raced. */
  webhookCreation: 7_146_391_005,
} as const;

/** Namespaces of the two-int key space; the second key is the row's id. */
export const AdvisoryLockNamespace = {
  /** Serialises match reports of one alert (see `reportMatches`). */
  alertMatches: 7_146_391,
} as const;
