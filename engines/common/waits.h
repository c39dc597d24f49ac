// The waits the server engines (PostgreSQL, MySQL / MariaDB) name in their Options, their
// shared defaults, and the one way to read and check them. docs/engines/timeouts.md
// explains each wait and what a caller sees when it runs out.
//
//   LEDGER_ASSIGN_OR_RETURN(absl::Duration wait,
//                           ParseWaitParameter("mysql", "read_timeout", "2s"));
//   LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "read_timeout", wait));
//
// Each engine's Options repeats the defaults below (a static_assert in each engine
// keeps them equal), so a field's default is readable where the field is.
//
// Internal to engines/. Thread-safe: constants and pure functions.
#ifndef LEDGER_ENGINES_COMMON_WAITS_H_
#define LEDGER_ENGINES_COMMON_WAITS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ledger::engine_common {

// Opening a session (TCP, TLS, authentication), the attempt as a whole.
inline constexpr absl::Duration kConnectTimeoutDefault = absl::Seconds(10);
// How long an open waits for another process's migrations to finish (the migration
// lock), then Unavailable.
inline constexpr absl::Duration kMigrationLockWaitDefault = absl::Seconds(120);
// A row lock outside the claim (an account, a work claim): then RetryableError. Equal to
// the claim's default wait (idempotency/key.h), so a submit with the default wait policy
// never changes the session's lock wait back and forth.
inline constexpr absl::Duration kAccountLockWaitDefault = absl::Seconds(10);
// One statement, counted by the server (lock waits inside it included).
inline constexpr absl::Duration kStatementTimeoutDefault = absl::Seconds(30);
// The client's own bound on a server that does not answer at all (frozen, partitioned):
// above the statement timeout, so a live server always answers first.
inline constexpr absl::Duration kReadTimeoutDefault = absl::Seconds(40);
inline constexpr absl::Duration kWriteTimeoutDefault = absl::Seconds(40);

// A wait given as a URL parameter: a positive, finite duration with its unit ("250ms",
// "2s", "1.5s", "1m"). InvalidArgument naming the parameter otherwise (a bare "5" is
// refused: seconds or milliseconds would be a guess).
absl::StatusOr<absl::Duration> ParseWaitParameter(std::string_view engine, std::string_view name,
                                                  std::string_view value);

// InvalidArgument unless `wait` is positive and finite: every wait is bounded.
absl::Status CheckWait(std::string_view engine, std::string_view name, absl::Duration wait);

// InvalidArgument unless `outer` > `inner` (both named): the client's read timeout must
// exceed the server's statement timeout, or a live server would lose its connection
// instead of answering with its own error; the statement timeout must exceed the lock
// wait, or a lock wait would end as a statement timeout.
absl::Status CheckWaitExceeds(std::string_view engine, std::string_view outer_name,
                              absl::Duration outer, std::string_view inner_name,
                              absl::Duration inner);

// `wait` in whole seconds, rounded up (a caller who allows 1.5 s waits 2 s rather than
// giving up early), at least `minimum`, at most INT32_MAX (what the servers take).
int64_t WholeSecondsRoundedUp(absl::Duration wait, int64_t minimum);

// `wait` in whole milliseconds, rounded up, 1..INT32_MAX.
int64_t WholeMillisecondsRoundedUp(absl::Duration wait);

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_WAITS_H_
