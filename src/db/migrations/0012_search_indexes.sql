-- The search's indexes, measured (issue 29; bench/README.md, "Health over time and search"). With 1,000,000
-- deliveries on PostgreSQL 15, the four event indexes of 0011 took an event's recording from 8.9 to 21.4 µs of CPU and
-- from 705 to 1,264 WAL bytes, and two of them answered searches the primary key answers nearly as well: an alert's
-- or an event type's deliveries are found walking it newest first, a page in a few ms, since most alerts and types
-- are common. They go; the case and time indexes stay (a case is a few events among millions; a time range in the
-- past would otherwise be read after every newer delivery).
DROP INDEX IF EXISTS webhook_events_alert;
DROP INDEX IF EXISTS webhook_events_type;
-- Pings are the rare type the walk would look far for: a partial index of theirs, written for pings only.
CREATE INDEX webhook_deliveries_pings ON webhook_deliveries (id) WHERE is_ping;
