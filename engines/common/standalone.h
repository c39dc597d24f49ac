// The one runner of the SQL engines for short standalone work outside the submit path
// (account administration, reads, key pruning, work claims, webhooks): borrow a pooled
// connection, open the engine's kind of transaction, run the body, end it, return the
// connection.
//
//   StandaloneSteps<PooledConnection> steps{.begin = ..., .finish = ..., .abandon = ...};
//   absl::StatusOr<Account> account = RunStandalone(*pool_, steps,
//       [&](MysqlConnection& connection) -> absl::StatusOr<Account> { ... });
//
// The engine says how its transactions begin and end (the steps); the runner owns the
// order and the one retry rule: when the body fails on a connection that sat in the
// pool and the engine says the session was lost before anything could commit
// (retry_on_fresh), the work runs once more on a newly opened connection. Nothing
// committed, so that is safe for writes too. At most kStandaloneAttemptsMax attempts;
// when they give up the caller gets the last attempt's status (Unavailable for a lost
// session), as it would without the retry.
//
// Internal to engines/. Thread-safe if the steps and the body are.
#ifndef LEDGER_ENGINES_COMMON_STANDALONE_H_
#define LEDGER_ENGINES_COMMON_STANDALONE_H_

#include <functional>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"

namespace ledger::engine_common {

inline constexpr int kStandaloneAttemptsMax = 2;

inline const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// Every step is optional. `Lease` is the pool's lease type.
template <typename Lease>
struct StandaloneSteps {
  // Before the body: BEGIN, session settings. A failure skips the body.
  std::function<absl::Status(Lease&)> begin;
  // After the body succeeded: COMMIT (its failure is the answer), or the end of a read.
  std::function<absl::Status(Lease&)> finish;
  // After the body or begin failed: ROLLBACK, discarding a lost connection.
  std::function<void(Lease&, const absl::Status&)> abandon;
  // Whether `failure` means the (reused) session was lost before anything committed.
  std::function<bool(Lease&, const absl::Status&)> retry_on_fresh;
};

template <typename Pool, typename Body>
auto RunStandalone(Pool& pool, const StandaloneSteps<typename Pool::Lease>& steps, Body&& body)
    -> std::invoke_result_t<Body&, decltype(*std::declval<typename Pool::Lease&>())> {
  using Result = std::invoke_result_t<Body&, decltype(*std::declval<typename Pool::Lease&>())>;
  for (int attempt = 1;; ++attempt) {
    auto lease = attempt == 1 ? pool.Acquire() : pool.AcquireFresh();
    if (!lease.ok()) return Result(lease.status());
    const absl::Status begun = steps.begin ? steps.begin(*lease) : absl::OkStatus();
    Result result = begun.ok() ? body(**lease) : Result(begun);
    if (StatusOf(result).ok()) {
      if (!steps.finish) return result;
      absl::Status finished = steps.finish(*lease);
      if (!finished.ok()) return Result(std::move(finished));
      return result;
    }
    if (steps.abandon) steps.abandon(*lease, StatusOf(result));
    const bool retry = attempt < kStandaloneAttemptsMax && lease->reused() &&
                       steps.retry_on_fresh && steps.retry_on_fresh(*lease, StatusOf(result));
    if (!retry) return result;
  }
}

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_STANDALONE_H_
