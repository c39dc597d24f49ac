// Several statements of a storage transaction in ONE round trip, through libpq's
// pipeline mode (libpq 14 and later) beneath libpqxx 6.4, which has no call for it:
// each query's [Parse, on a named statement's first use in the session,] Bind +
// Execute, then one Sync, all sent before any reply is read. A submit uses two:
//
// - The claim (postgres_engine.cc, ClaimKeys): BEGIN, the claim's statements, then
//   one statement that reads the key rows and, when the ledger named the accounts up
//   front, locks them (read_keys_lock_accounts, which locks nothing when a claimed key
//   has a committed record).
// - The commit (SendWrite below): the checked write and COMMIT. The write is
//   checked (postgres_statements.h, WriteStatementOf): the server compares
//   the rows it wrote with the counts the client expects and raises kShortWriteSqlState
//   when they differ. An error in the write aborts the pipeline, so the COMMIT behind it
//   is never run: a short write is never committed, and the transaction is left
//   aborted for the caller to roll back.
//
// What a failure means (the error table's phases, docs/engines/errors.md):
// - The session found lost before anything was sent, or while a query before COMMIT
//   was being sent or awaited: nothing can have committed (the phase of the first
//   query, or of the query whose answer was awaited: Unavailable).
// - The server refused a query: the pipeline is aborted there, nothing after it ran,
//   COMMIT included (the refused query's phase: the claim's lock timeout is the
//   claim's, the account lock's is the lock-accounts phase's, a short write is what
//   CheckApplied says).
// - Anything else once COMMIT was handed to libpq (no answer, a cut connection, the
//   reply deadline, an error COMMIT itself returned): the commit phase, in doubt.
//
//   PipelineResult result = RunPipeline(session, {
//       BeginQuery(kClaimContext),
//       {.statement = "claim_advisory_locks", .sql = ..., .parameters = {identities},
//        .context = kClaimContext},
//       ...});
//
// Internal to engines/postgres. Not thread-safe: the thread holding the session, between
// libpqxx's calls; the session is idle again (out of pipeline mode) unless the result
// says to discard it.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINE_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_statements.h"

typedef struct pg_result PGresult;  // libpq-fe.h

namespace ledger::postgres_internal {

// A parameter of a pipelined query: a text value (a lock timeout) or an array in the
// binary format (postgres_binary_arrays.h), which the server reads without parsing; or
// an array's elements, each a parameter of its own in the binary format (a NULL
// element: NULL), for a statement that takes them as scalars (an inline write shape).
struct PipelineParameter {
  PipelineParameter(std::string text) : value(std::move(text)) {}  // NOLINT: implicit
  PipelineParameter(BinaryArray array)                              // NOLINT: implicit
      : value(std::move(array.bytes)), binary(true) {}
  static PipelineParameter ElementsOf(BinaryArray array) {
    PipelineParameter parameter{std::string()};
    parameter.elements_of = std::move(array);
    return parameter;
  }
  // The parameters it makes: 1, or the array's elements.
  size_t Width() const { return elements_of.has_value() ? elements_of->length : 1; }

  std::string value;  // the text, or the array's bytes
  bool binary = false;
  std::optional<BinaryArray> elements_of;  // ElementsOf: the array (value unused)
};

// One query of a pipeline: a prepared statement (`statement`, with `sql` for its Parse
// on first use in the session). BEGIN and COMMIT too, so that nothing is parsed per
// transaction.
struct PipelinedQuery {
  const char* statement = nullptr;   // a named statement libpq prepares (never libpqxx's)
  std::string_view sql;              // its text; needed only before its first use
  std::vector<PipelineParameter> parameters;
  PostgresErrorContext context;      // what its failure means
  bool commits = false;              // COMMIT: once handed to libpq, a loss is in doubt
  // Reads the rows the query returned (the result is valid during the call); a failure
  // is the pipeline's status, the queries after it still read to the Sync.
  std::function<absl::Status(const PGresult*)> read;
  // The status of the server's refusal with `sql_state` (and its DETAIL), when the
  // query has its own reading of one (a short write); none: the error table's.
  std::function<absl::Status(std::string_view sql_state, std::string_view detail,
                             std::string_view message)>
      refused;
};

struct PipelineResult {
  absl::Status status;
  // The session cannot serve another transaction: its connection is lost or cut, or
  // libpq was left in pipeline mode.
  bool discard_session = false;
  // The number of queries the server ran before it refused one (all of them on
  // success): a refusal is queries[ran]'s.
  size_t ran = 0;
  // The queries whose answers were read, each one OK (all of them on success). None
  // when sending failed: what reached the server is then unknown, whatever `ran` says.
  size_t answered = 0;
};

// Sends the queries and one Sync under the session's reply deadline, then reads every
// answer. Precondition: the session is idle or inside a transaction none of whose
// statements failed. A named statement is prepared in the same pipeline on its first
// use in the session.
PipelineResult RunPipeline(PostgresSession& session, std::vector<PipelinedQuery>& queries);

// BEGIN ISOLATION LEVEL READ COMMITTED, as a pipeline's first query.
PipelinedQuery BeginQuery(const PostgresErrorContext& context);

// The checked write and COMMIT (the second round trip of a submit), or the checked
// write alone (a unit of work's writes flushed before a read of its own).
struct PipelinedWrite {
  bool begin = false;               // BEGIN rides ahead (no statement of it was sent yet)
  // Sent after BEGIN, before the write: the check of a submit decided on remembered rows
  // (postgres_remembered_rows.h), whose refusal stops the write.
  std::vector<PipelinedQuery> ahead;
  bool commit = true;               // COMMIT rides behind
  // The write statement (WriteStatementOf): its name, its text for the Parse on first
  // use in a session, and its shape; an inline shape takes each array's elements as
  // parameters of their own.
  const WriteStatement* statement = nullptr;
  std::vector<BinaryArray> parameters;  // checked: as many values as the statement takes
  // The status of a short write, from the counts the server reports (its DETAIL).
  std::function<absl::Status(std::string_view applied)> short_write;
};

// Sends [BEGIN,] the write [and COMMIT] in one round trip. Precondition: the session is
// idle (`begin`) or inside a transaction none of whose statements failed.
PipelineResult SendWrite(PostgresSession& session, PipelinedWrite write);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_PIPELINE_H_
