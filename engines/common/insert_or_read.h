// "Insert, or read the existing row": the one loop the SQL engines use for rows whose
// identity the caller chose (an asset code, a work claim's key) and which a concurrent
// writer may insert, or delete, at the same moment.
//
//   LEDGER_ASSIGN_OR_RETURN(WorkClaim stored, InsertOrRead<WorkClaim>("mysql", "work claim",
//       [&]() -> absl::StatusOr<std::optional<WorkClaim>> { ...one round... }));
//
// A round inserts the row unless one exists and returns the row now stored, or nullopt
// when it saw neither: the conflicting row was committed after the round's snapshot, or
// deleted (pruned, failed) between the insert and the read. Each such round means
// another writer just finished with the row, so more than kInsertOrReadRoundsMax of them
// means something keeps racing: the caller gets RetryableError (Aborted, tag retryable),
// as after a deadlock. Nothing was written by the rounds that returned nullopt.
//
// Internal to engines/. Thread-safe if `round` is.
#ifndef LEDGER_ENGINES_COMMON_INSERT_OR_READ_H_
#define LEDGER_ENGINES_COMMON_INSERT_OR_READ_H_

#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::engine_common {

inline constexpr int kInsertOrReadRoundsMax = 4;

template <typename Row, typename Round>
absl::StatusOr<Row> InsertOrRead(std::string_view engine, std::string_view what, Round&& round) {
  for (int rounds = 1; rounds <= kInsertOrReadRoundsMax; ++rounds) {
    absl::StatusOr<std::optional<Row>> stored = round();
    if (!stored.ok()) return stored.status();
    if (stored->has_value()) return **std::move(stored);
  }
  return RetryableError(absl::StrCat(View(engine), ": the ", View(what),
                                     " kept changing under concurrent writers; try again"));
}

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_INSERT_OR_READ_H_
