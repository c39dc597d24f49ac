-- Event sequences in commit order (docs/concepts.md, "Reading events"). AUTO_INCREMENT is
-- handed out at INSERT, not at COMMIT, so a reader paging "after N" could pass N+1 while
-- the transaction holding N was still in flight and never see N. The AUTO_INCREMENT
-- column becomes the insert order; the public sequence is given by the reader's
-- sequencer to committed rows only, under the lock row of outbox_sequencer.
ALTER TABLE outbox_events
  CHANGE `sequence` insert_order BIGINT NOT NULL AUTO_INCREMENT,
  ADD COLUMN `sequence` BIGINT NULL,
  ADD UNIQUE KEY outbox_events_by_sequence (`sequence`);
UPDATE outbox_events SET `sequence` = insert_order;
CREATE TABLE IF NOT EXISTS outbox_sequencer (
  id TINYINT NOT NULL PRIMARY KEY
) ENGINE = InnoDB;
INSERT IGNORE INTO outbox_sequencer (id) VALUES (1);
