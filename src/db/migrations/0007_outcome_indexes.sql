-- A delivery's outcome moves its row out of the due index: an update of an indexed column, so never HOT, and it
-- writes an entry in every index whose predicate the new row meets. `webhook_deliveries_finished`
-- (status, finished_at WHERE status <> 'pending') took one for every delivery. Now only failed deliveries have an
-- index of their own (few, and what redeliver-many and the backlog's failed count ask for); sent ones are found by
-- the cleanup walking the primary key (src/outbox/purge.ts). Measured on PostgreSQL 15 here, outcome batches of
-- 512 sent: 5.71 WAL records and 683 bytes per delivery before, 4.67 and 604 after; 26 ms a batch before, 18 ms
-- after; the backend's CPU draining 50,000 deliveries, 127–131 µs a delivery before, 117–120 after (2 cores, busy).
DROP INDEX webhook_deliveries_finished;
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (finished_at) WHERE status = 'failed';
