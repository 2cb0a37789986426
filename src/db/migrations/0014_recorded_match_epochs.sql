-- Each process keeps, per alert, the matches it knows the alert recorded (alerts/recorded-matches.ts), so that an
-- unchanged rerun does not ask the database about each of its rows again. What it knows holds only while none of
-- those matches is deleted: every statement that deletes an alert's matches bumps the alert's epoch, which a run
-- reads under the alert's row lock and compares with the one its knowledge was gathered at. The service deletes
-- matches only with their alert (0013's cascade), whose epoch then does not matter; this also covers an operator's
-- DELETE or TRUNCATE.
ALTER TABLE alerts ADD COLUMN matches_epoch bigint NOT NULL DEFAULT 0;

CREATE FUNCTION bump_epochs_of_deleted_matches() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE alerts SET matches_epoch = matches_epoch + 1 WHERE id IN (SELECT DISTINCT alert_id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER alert_matches_deleted AFTER DELETE ON alert_matches REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION bump_epochs_of_deleted_matches();

-- TRUNCATE names no rows: every alert's epoch.
CREATE FUNCTION bump_all_match_epochs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE alerts SET matches_epoch = matches_epoch + 1;
  RETURN NULL;
END $$;
CREATE TRIGGER alert_matches_truncated AFTER TRUNCATE ON alert_matches
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_match_epochs();
