/** What `Database.health` answers: see PostgresPool.health and EmbeddedPool.health for what each database checks. */
export interface DatabaseHealth {
  ok: boolean;
  /** The database did not answer in time but is working through other statements (the embedded database). */
  busy?: boolean;
  /** Why it is not ok. */
  reason?: string;
}
