// The `ledger` tool's exit codes: one per kind of result, so a script can branch on
// the code alone. docs/cli.md lists the same table; keep the two in step.
//
// | code | name           | when                                                        |
// |------|----------------|-------------------------------------------------------------|
// | 0    | ok             | committed, duplicate (a replay), or the command succeeded   |
// | 1    | error          | anything else: engine not built, internal error             |
// | 2    | bad_input      | usage errors, malformed JSON, unknown fields, invalid values|
// | 3    | rejected       | a business rule declined the operation; the key stays unused|
// | 4    | conflict       | the key was committed with a different payload              |
// | 5    | in_progress    | the key's first attempt still runs (--fail-fast or timeout) |
// | 6    | faulted        | infrastructure error, database unreachable or timed out (at |
// |      |                |   open or later, any command): run again (submit: SAME key) |
// | 7    | verify_failed  | verify (or the demo's exactly-once checks) found violations |
// | 8    | not_found      | the named account, asset or transaction does not exist      |
// | 9    | already_exists | account or asset exists; submit --replay error on a used key|
// | 10   | database_refused | the database refused the session: it does not exist, a    |
// |      |                |   wrong user or password, no right to it; retrying won't help|
//
// What happened decides, not where: the engines sort their errors at the source
// (engines/common/error_table.h), Unavailable and DeadlineExceeded are 6 and
// PermissionDenied is 10 on every engine and every command, opening included.
//
// Thread-safe: pure functions.
#ifndef LEDGER_CLI_EXIT_CODES_H_
#define LEDGER_CLI_EXIT_CODES_H_

#include <string_view>

#include "absl/status/status.h"
#include "ledger/outcome.h"

namespace ledger::cli {

enum class ExitCode : int {
  kOk = 0,
  kError = 1,
  kBadInput = 2,
  kRejected = 3,
  kConflict = 4,
  kInProgress = 5,
  kFaulted = 6,
  kVerifyFailed = 7,
  kNotFound = 8,
  kAlreadyExists = 9,
  kDatabaseRefused = 10,
};

inline int ToProcessExitCode(ExitCode code) { return static_cast<int>(code); }

// "ok", "bad_input", ...: the `kind` of the JSON error objects the tool prints.
std::string_view ExitCodeName(ExitCode code);

// The idempotency tags first (conflict, in progress, duplicate refused, retryable and
// in doubt), then the canonical code.
ExitCode ExitCodeForStatus(const absl::Status& status);

ExitCode ExitCodeForOutcome(const Outcome& outcome);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_EXIT_CODES_H_
