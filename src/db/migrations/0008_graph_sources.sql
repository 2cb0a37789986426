-- A graph behind each data source (issue 25): where it is, never its password in clear. `graph` is NULL for a
-- source whose matches are reported through the API; otherwise {vendor: "embedded", allowWrites} or
-- {vendor: "neo4j", url, user, database?, allowWrites}. The Bolt password is sealed like webhook secrets
-- (src/secrets/secret-box.ts) and re-sealed by `rekey`.
ALTER TABLE data_sources
  ADD COLUMN graph jsonb,
  ADD COLUMN graph_password_sealed text,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
  ADD CONSTRAINT data_sources_graph_vendor CHECK (graph IS NULL OR graph->>'vendor' IN ('embedded', 'neo4j')),
  ADD CONSTRAINT data_sources_graph_password_sealed_form CHECK (graph_password_sealed ~ '^v1:[0-9a-f]{8}:');
