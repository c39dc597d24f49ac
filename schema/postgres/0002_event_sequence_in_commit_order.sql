-- Event sequences in commit order (docs/concepts.md, "Reading events"). An IDENTITY is
-- handed out at INSERT, not at COMMIT, so a reader paging "after N" could pass N+1 while
-- the transaction holding N was still in flight and never see N. The identity becomes
-- the insert order; the public sequence is given by the reader's sequencer to committed
-- rows only, under one lock, so a later sequence is never committed before an earlier.
ALTER TABLE outbox_events RENAME COLUMN sequence TO insert_order;
ALTER TABLE outbox_events ADD COLUMN sequence BIGINT UNIQUE;
UPDATE outbox_events SET sequence = insert_order;
CREATE INDEX outbox_events_unsequenced ON outbox_events (insert_order) WHERE sequence IS NULL;
