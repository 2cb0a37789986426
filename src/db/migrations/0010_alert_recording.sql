-- What an alert run writes per match, made cheaper (bench/README.md, "Alerts").
--
-- The identity hashes of cases and matches are hex strings compared byte for byte: under the database's collation
-- (C.UTF-8 here) each comparison of an index lookup went through the C library's strcoll. Hex sorts the same
-- under "C", so no order the API answers changes.
ALTER TABLE alert_matches ALTER COLUMN hash TYPE text COLLATE "C";
ALTER TABLE cases ALTER COLUMN hash TYPE text COLLATE "C";

-- A match's alert is its case's: deleting an alert deletes its cases, and they their matches (case_id's foreign
-- key). The second foreign key only added a check per inserted match.
ALTER TABLE alert_matches DROP CONSTRAINT alert_matches_alert_id_fkey;
