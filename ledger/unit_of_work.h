// A unit of work: the caller's own writes and the ledger's in ONE database transaction.
//
//   absl::Status status = book.Transact([&](ledger::UnitOfWork& work) -> absl::Status {
//     LEDGER_ASSIGN_OR_RETURN(ledger::Outcome paid, work.Submit(payment));  // key "order-7"
//     if (paid.kind == ledger::OutcomeKind::kDuplicate) return absl::OkStatus();  // done before
//     if (paid.kind != ledger::OutcomeKind::kCommitted) return absl::AbortedError(paid.detail);
//     return work.Execute("INSERT INTO orders (id, total) VALUES (" + work.Placeholder(1) +
//                         ", " + work.Placeholder(2) + ")", {"order-7", int64_t{1500}})
//         .status();
//   });
//   // OK: the order row, the payment, its key record and its outbox event are committed,
//   // together. Anything else: none of them is.
//
// Ledger::Transact begins one transaction on the ledger's engine and calls `work` with
// a UnitOfWork. The outcomes `work` sees are DECIDED, NOT DURABLE: a `committed` outcome
// becomes final only when Transact returns OK. When `work` returns an error (or throws)
// everything rolls back, keys included. A deadlock or serialization failure anywhere in
// the transaction, the caller's statements included, rolls everything back and runs
// `work` again from the start (TransactOptions::attempts_max), so `work` must have no
// side effect outside the transaction (call a bank under run-idempotently, outside). An
// error at COMMIT may be in doubt (IsInDoubt): run the same unit again with the same
// keys; a submit then replays as `duplicate`, and the caller's writes need the same
// guard (a unique column holding the key, or skipping them on `duplicate`).
//
// Inside, Submit and SubmitBatch validate, claim, lock and decide exactly as
// Ledger::Submit does (same lock order: keys, then accounts in id order), without group
// commit: the unit is the caller's own transaction. A rejected submit writes nothing of
// its own (its key stays unused); the caller decides whether the unit goes on. A
// statement that fails (the caller's or the ledger's: bad SQL, a lost claim wait) fails
// the unit: Transact rolls back and returns that error, even if `work` returned OK, and
// every later call inside returns FailedPrecondition.
//
// Placeholders are the engine's own: `?` on SQLite and MySQL, `$1`, `$2`, ... on
// PostgreSQL; Placeholder(n) writes the right one. The memory engine runs submits but
// no SQL (Unimplemented). The engine's native handle: SqliteHandleOf,
// PostgresHandleOf, MysqlHandleOf in each engine's header.
//
// Not thread-safe: a UnitOfWork belongs to the thread running Transact, and lives only
// during the call of `work`.
#ifndef LEDGER_LEDGER_UNIT_OF_WORK_H_
#define LEDGER_LEDGER_UNIT_OF_WORK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "idempotency/key.h"
#include "idempotency/run_idempotently.h"
#include "ledger/caller_sql.h"
#include "ledger/ledger.h"

namespace ledger {

struct TransactOptions {
  // Runs of `work` when the database reports a deadlock or serialization failure (each
  // rolled back fully). 0: LedgerOptions::attempts_max; else 1 .. kAttemptsMaxLimit.
  // Default: 0.
  int attempts_max = 0;
  // How long a submit inside waits for a key another transaction holds (SQLite: for the
  // writer lock, taken by the unit's first statement); then IsInProgress and the unit
  // fails. Replaces each request's claim.wait. Default: 10 s.
  WaitPolicy claim_wait;
};

// OK, or InvalidArgument naming the bad field.
absl::Status ValidateTransactOptions(const TransactOptions& options);

class UnitOfWork {
 public:
  UnitOfWork(const UnitOfWork&) = delete;
  UnitOfWork& operator=(const UnitOfWork&) = delete;

  // Ledger::Submit's validation, claim, rules and outcomes, in this transaction. The
  // outcome is final only once Transact returns OK. An engine error (a claim wait run
  // out, a deadlock) fails the unit and comes back as the error.
  absl::StatusOr<Outcome> Submit(const SubmitRequest& request);
  // Ledger::SubmitBatch in this transaction.
  absl::StatusOr<std::vector<SubmitResult>> SubmitBatch(const SubmitBatchRequest& batch);

  // IdempotentRunner::Run (idempotency/run_idempotently.h) with the work claim kept in
  // this transaction: the claim, what `work` writes through this unit and the stored
  // result commit together, and a rollback (or a crash before COMMIT) leaves no claim,
  // pending or not. A retry after COMMIT replays the stored result. An error from `work`
  // releases the claim (the unit may go on); a claim that another transaction is writing
  // makes this wait for it, and a claim pending outside with its lease running is
  // IsInProgress. Needs SQL: Unimplemented on the memory engine.
  absl::StatusOr<std::string> RunIdempotently(
      const KeyIdentity& identity, const nlohmann::json& payload, const WorkOptions& options,
      const std::function<absl::StatusOr<std::string>()>& work);

  // The caller's statement, its `parameters` bound to its placeholders: the rows it
  // changed. Any error fails the unit (see above).
  absl::StatusOr<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& parameters = {});
  // The same for a statement that returns rows (at most kCallerSqlRowsMax).
  absl::StatusOr<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& parameters = {});
  // The engine's placeholder for parameter `position` (1-based): "?" or "$<position>".
  std::string Placeholder(int position) const;

  std::string_view engine_name() const;
  // 1 for the first run of `work`, 2 after a retry, ...
  int attempt() const { return attempt_; }
  // OK while the unit can still commit; else the error that failed it.
  const absl::Status& failure() const;

  // The engine's handle, untyped: use the engine header's typed accessor instead.
  absl::StatusOr<void*> NativeHandle();

 private:
  friend class Ledger;
  UnitOfWork(Ledger& ledger, internal::UnitOfWorkState& state, int attempt)
      : ledger_(ledger), state_(state), attempt_(attempt) {}
  absl::Status Usable() const;

  Ledger& ledger_;
  internal::UnitOfWorkState& state_;
  const int attempt_;
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_UNIT_OF_WORK_H_
