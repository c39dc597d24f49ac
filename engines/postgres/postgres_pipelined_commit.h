// A storage transaction's buffered writes and its COMMIT in ONE round trip, through
// libpq's pipeline mode (libpq 14 and later) beneath libpqxx 6.4, which has no call for
// it: [Parse of the checked write statement, on its first use in the session,] Bind +
// Execute of it, Bind + Execute of COMMIT, Sync, all sent before any reply is read.
//
// The write is the checked one (postgres_statements.h, kCheckedWriteBatch): the server
// compares the rows it wrote with the counts the client expects and raises
// kShortWriteSqlState when they differ. An error in the write aborts the pipeline, so
// the COMMIT behind it is never run: a short write is never committed, and the
// transaction is left aborted for the caller to roll back.
//
// What a failure means (the error table's phases, docs/engines/errors.md):
// - The session found lost before anything was sent, or while the write was being
//   sent: nothing can have committed (the write phase: Unavailable).
// - The server answered the write (or its Parse) with an error: the COMMIT did not run
//   (the write phase: a deadlock is retryable, a short write what CheckApplied says).
// - Anything else once COMMIT was handed to libpq (no answer, a cut connection, the
//   reply deadline, an error COMMIT itself returned): the commit phase, in doubt.
//
//   PipelinedCommitResult result = WriteAndCommit(session, {
//       .statement = batch.CheckedStatement(), .sql = &batch.CheckedStatementSql(),
//       .parameters = batch.CheckedParameters(),
//       .short_write = [&](std::string_view applied) {
//         return batch.CheckAppliedText(applied); }});
//
// Internal to engines/postgres. Not thread-safe: the thread holding the session, between
// libpqxx's calls; the session is idle again (out of pipeline mode) unless the result
// says to discard it.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINED_COMMIT_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINED_COMMIT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engines/postgres/postgres_connection_pool.h"

namespace ledger::postgres_internal {

struct PipelinedWrite {
  const char* statement = nullptr;  // a checked write statement's name
  const std::string* sql = nullptr; // its text, for the Parse on first use in a session
  std::vector<std::string> parameters;
  // The status of a short write, from the counts the server reports (its DETAIL).
  std::function<absl::Status(std::string_view applied)> short_write;
};

struct PipelinedCommitResult {
  absl::Status status;
  // The session cannot serve another transaction: its connection is lost or cut, or
  // libpq was left in pipeline mode.
  bool discard_session = false;
};

// Sends the write and COMMIT in one round trip under the session's reply deadline.
// Precondition: the session is inside a transaction (BEGIN sent, no statement of it
// failed) and has the write check (PostgresSession::checks_write_counts).
PipelinedCommitResult WriteAndCommit(PostgresSession& session, const PipelinedWrite& write);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINED_COMMIT_H_
