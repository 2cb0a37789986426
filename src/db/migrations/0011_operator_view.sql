-- The operator's view of deliveries (issue 29): delivery health over time, and a search across webhooks.

-- Attempt outcomes counted per minute and per hour, for each webhook and for all of them together (webhook_id 0),
-- written by the statement that records the outcomes (src/outbox/attempt-counts.ts). The health endpoint reads at
-- most one ring of rows here, never the deliveries: its cost does not grow with the deliveries kept, and its history
-- outlives their retention (sent deliveries are kept a day by default; the week view needs seven).
-- Each (webhook, span) is a ring of `slot`s: minute m of the epoch is slot m % 120 (two hours, for the last hour),
-- hour h is slot h % 192 (eight days, for the last week). A slot's row is taken over by the next bucket that lands
-- on it (its counts start again), so the table holds at most 312 rows per webhook with no cleanup, and `bucket`
-- says which minute or hour a row counts (a reader keeps the buckets of its window only).
-- No index but the key, whose columns never change: every update is HOT, and fillfactor 50 leaves it the room.
CREATE TABLE delivery_attempt_counts (
  webhook_id integer NOT NULL,
  span text NOT NULL CHECK (span IN ('minute', 'hour')),
  slot smallint NOT NULL,
  bucket timestamptz NOT NULL,
  -- Attempts that ended the delivery sent, ended it failed (no retry left), or failed and left it to retry (pings aside).
  sent integer NOT NULL,
  failed integer NOT NULL,
  retried integer NOT NULL,
  -- The same attempts by duration class (src/outbox/attempt-counts.ts, DURATION_BOUNDS_MS), for the p95.
  durations integer[] NOT NULL,
  PRIMARY KEY (webhook_id, span, slot)
) WITH (fillfactor = 50);

-- The search across webhooks (src/outbox/delivery-search.ts). Its indexes are on the events, which are written once
-- and never updated: each costs one entry per event when it is recorded, none per delivery or attempt. The deliveries,
-- updated at every attempt (never a HOT update: their status is indexed), get one partial index, whose entries are
-- written only when a delivery ends failed.
-- What an event is about, for the search by case and by alert (NULL for ping and webhookDisabled).
ALTER TABLE webhook_events ADD COLUMN alert_id integer, ADD COLUMN case_id integer;
UPDATE webhook_events SET alert_id = (payload::jsonb #>> '{data,alert,id}')::integer, case_id = (payload::jsonb #>> '{data,case,id}')::integer
WHERE event_type IN ('newCase', 'newMatch', 'caseStatusChange');
CREATE INDEX webhook_events_case ON webhook_events (case_id) WHERE case_id IS NOT NULL;
-- A delivery is created with its event, in one statement: their created_at is the same. A search with a time range
-- reads the events in time order, newest first, through one of these.
CREATE INDEX webhook_events_created ON webhook_events (created_at);
CREATE INDEX webhook_events_alert ON webhook_events (alert_id, created_at) WHERE alert_id IS NOT NULL;
CREATE INDEX webhook_events_type ON webhook_events (event_type, created_at);
-- A webhook's failed deliveries, newest first: what an operator asks of a failing receiver.
CREATE INDEX webhook_deliveries_failed_by_webhook ON webhook_deliveries (webhook_id, id) WHERE status = 'failed';
