// PLACEHOLDER: written by the run-idempotently helper; see stores.h for the storage.
