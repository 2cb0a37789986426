-- An alert run inserts a case per new case key and a match per new match; each foreign key on them was a check
-- per inserted row (a trigger running a query that locks the referenced row): measured on PostgreSQL 15 here,
-- 4.3 µs per case (alert_id) and 4.7 µs per match (case_id), about 0.5 s of the server's CPU for a run of 60,000
-- matches (bench/README.md, "Alerts"). Their only other job was the cascade, which these triggers do once per
-- DELETE statement instead: deleting an alert (or its data source) deletes its cases, and deleting cases deletes
-- their matches. No orphan can be inserted: cases and matches are written under the alert's row lock (FOR UPDATE
-- in a run, FOR SHARE in a report), so the alert cannot be deleted meanwhile, and a match's case comes from the
-- same transaction's upsert.
ALTER TABLE cases DROP CONSTRAINT cases_alert_id_fkey;
ALTER TABLE alert_matches DROP CONSTRAINT alert_matches_case_id_fkey;

CREATE FUNCTION delete_cases_of_alerts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM cases WHERE alert_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER alerts_delete_cases AFTER DELETE ON alerts REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION delete_cases_of_alerts();

CREATE FUNCTION delete_matches_of_cases() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM alert_matches WHERE case_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER cases_delete_matches AFTER DELETE ON cases REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION delete_matches_of_cases();
