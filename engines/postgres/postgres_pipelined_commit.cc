#include "engines/postgres/postgres_pipelined_commit.h"

#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_statements.h"
#include "libpq-fe.h"

namespace ledger::postgres_internal {
namespace {

constexpr PostgresErrorContext kWriteContext{.operation = "write",
                                             .phase = engine_common::ErrorPhase::kWrite};
constexpr PostgresErrorContext kCommitContext{.operation = "commit",
                                              .phase = engine_common::ErrorPhase::kCommit};

// A query's results are one result and a null; more before the null are not expected,
// and reading stops after this many.
constexpr int kResultsPerQueryMax = 4;

// What one query of the pipeline (or its Sync) answered.
struct Answer {
  ExecStatusType status = PGRES_FATAL_ERROR;
  std::string sql_state;  // empty for libpq's own failures (no answer came)
  std::string message;
  std::string detail;
  std::string command;  // the command tag: "COMMIT", or "ROLLBACK" for a failed transaction
  int rows = 0;
};

std::string Field(const PGresult* result, int field) {
  const char* value = PQresultErrorField(result, field);
  return value == nullptr ? "" : value;
}

Answer AnswerOf(const PGresult* result) {
  Answer answer;
  answer.status = PQresultStatus(result);
  if (answer.status == PGRES_FATAL_ERROR) {
    answer.sql_state = Field(result, PG_DIAG_SQLSTATE);
    answer.message = PQresultErrorMessage(result);
    answer.detail = Field(result, PG_DIAG_MESSAGE_DETAIL);
  }
  answer.command = PQcmdStatus(const_cast<PGresult*>(result));
  answer.rows = PQntuples(result);
  return answer;
}

// The next query's answer, and the null that ends it (none follows a Sync). Blocks in
// libpq: the caller's reply deadline bounds it.
Answer NextAnswer(PGconn* connection) {
  PGresult* result = PQgetResult(connection);
  if (result == nullptr) {
    Answer nothing;
    nothing.message = PQerrorMessage(connection);
    return nothing;
  }
  Answer answer = AnswerOf(result);
  PQclear(result);
  if (answer.status == PGRES_PIPELINE_SYNC) return answer;
  for (int extra = 0; extra < kResultsPerQueryMax; ++extra) {
    PGresult* next = PQgetResult(connection);
    if (next == nullptr) return answer;
    // An error after the first result (a connection lost while reading) is the answer.
    if (PQresultStatus(next) == PGRES_FATAL_ERROR) answer = AnswerOf(next);
    PQclear(next);
  }
  answer.status = PGRES_FATAL_ERROR;
  answer.sql_state.clear();
  answer.message = "more results than one query returns";
  return answer;
}

bool ConnectionBad(PGconn* connection) { return PQstatus(connection) != CONNECTION_OK; }

// libpq's own failure (no SQLSTATE) in `context`.
PipelinedCommitResult LibpqFailure(PGconn* connection, const PostgresErrorContext& context,
                                   const std::string& message) {
  return {StatusFromLibpqFailure(context, ConnectionBad(connection), message),
          /*discard_session=*/true};
}

// After the server refused a query of the pipeline: the rest come back aborted, then
// the Sync, and the session leaves pipeline mode. False when it did not go that way.
bool FinishAbortedPipeline(PGconn* connection, int answers_left) {
  for (int answer = 0; answer < answers_left; ++answer) {
    if (NextAnswer(connection).status != PGRES_PIPELINE_ABORTED) return false;
  }
  if (NextAnswer(connection).status != PGRES_PIPELINE_SYNC) return false;
  return PQexitPipelineMode(connection) == 1;
}

// The answers, in order: the Parse's if `prepare`, the write's, COMMIT's, the Sync.
PipelinedCommitResult ReadAnswers(PostgresSession& session, PGconn* connection,
                                  const PipelinedWrite& write, bool prepare) {
  const int queries = prepare ? 3 : 2;
  for (int query = 0; query < queries - 1; ++query) {
    const bool is_prepare = prepare && query == 0;
    const Answer answer = NextAnswer(connection);
    const ExecStatusType expected = is_prepare ? PGRES_COMMAND_OK : PGRES_TUPLES_OK;
    if (answer.status == expected) {
      if (is_prepare) {
        session.pipelined_statements.insert(write.statement);
      } else {
        LEDGER_CHECK(answer.rows == 1) << "the checked write returned " << answer.rows
                                       << " rows, not its one row of counts";
      }
      continue;
    }
    if (answer.status != PGRES_FATAL_ERROR || answer.sql_state.empty()) {
      // No answer from the server (or one that makes no sense): COMMIT went out behind
      // this query, and whether it ran is unknown.
      return LibpqFailure(connection, kCommitContext, answer.message);
    }
    // The server refused this query: the pipeline is aborted, COMMIT did not run.
    absl::Status refused = answer.sql_state == kShortWriteSqlState
                               ? write.short_write(answer.detail)
                               : StatusFromServerError(kWriteContext, answer.sql_state,
                                                       answer.message);
    LEDGER_CHECK(!refused.ok()) << "a refused write mapped to OK: " << answer.message;
    const bool finished = FinishAbortedPipeline(connection, queries - 1 - query);
    return {std::move(refused), /*discard_session=*/!finished};
  }
  const Answer commit = NextAnswer(connection);
  PipelinedCommitResult result;
  if (commit.status == PGRES_COMMAND_OK && commit.command == "COMMIT") {
    result.status = absl::OkStatus();
  } else if (commit.status == PGRES_COMMAND_OK) {
    // The server rolled back instead: the transaction had failed, which no statement
    // of it reported. Nothing was committed.
    result.status = absl::InternalError(
        "postgres: commit: the server answered " + commit.command + ", not COMMIT");
  } else if (commit.status == PGRES_FATAL_ERROR && !commit.sql_state.empty()) {
    result.status = StatusFromServerError(kCommitContext, commit.sql_state, commit.message);
  } else {
    return LibpqFailure(connection, kCommitContext, commit.message);
  }
  // Whatever COMMIT answered, the Sync follows; a session that does not get back to
  // idle serves nothing more.
  const bool synced = NextAnswer(connection).status == PGRES_PIPELINE_SYNC &&
                      PQexitPipelineMode(connection) == 1;
  result.discard_session = !synced;
  return result;
}

// Sends the pipeline and reads its answers. `commit_sent`: set once COMMIT was handed
// to libpq, from when a loss is in doubt.
PipelinedCommitResult Exchange(PostgresSession& session, PGconn* connection,
                               const PipelinedWrite& write, bool& commit_sent) {
  if (PQenterPipelineMode(connection) != 1) {
    return LibpqFailure(connection, kWriteContext, PQerrorMessage(connection));
  }
  const bool prepare = !session.pipelined_statements.contains(write.statement);
  if (prepare &&
      PQsendPrepare(connection, write.statement, write.sql->c_str(), 0, nullptr) != 1) {
    return LibpqFailure(connection, kWriteContext, PQerrorMessage(connection));
  }
  std::vector<const char*> values;
  values.reserve(write.parameters.size());
  for (const std::string& parameter : write.parameters) values.push_back(parameter.c_str());
  if (PQsendQueryPrepared(connection, write.statement, static_cast<int>(values.size()),
                          values.data(), nullptr, nullptr, /*resultFormat=*/0) != 1) {
    return LibpqFailure(connection, kWriteContext, PQerrorMessage(connection));
  }
  commit_sent = true;
  if (PQsendQueryParams(connection, kCommit, 0, nullptr, nullptr, nullptr, nullptr,
                        /*resultFormat=*/0) != 1 ||
      PQpipelineSync(connection) != 1) {
    return LibpqFailure(connection, kCommitContext, PQerrorMessage(connection));
  }
  return ReadAnswers(session, connection, write, prepare);
}

}  // namespace

PipelinedCommitResult WriteAndCommit(PostgresSession& session, const PipelinedWrite& write) {
  LEDGER_CHECK(session.checks_write_counts) << "a pipelined commit on a session without the check";
  LEDGER_CHECK(write.statement != nullptr && write.sql != nullptr && write.short_write)
      << "an incomplete PipelinedWrite";
  // What the server said while the session sat idle in the transaction (a termination)
  // is read first: a session already lost fails before anything is sent, Unavailable as
  // before, not in doubt.
  PGconn* connection = session.handle->libpq();
  if (connection == nullptr || !SessionLooksAlive(session) || ConnectionBad(connection)) {
    return {StatusFromLibpqFailure(kWriteContext, /*connection_lost=*/true,
                                   "the server ended the session"),
            /*discard_session=*/true};
  }
  ReplyWatchdog::Armed armed = session.ArmReplyDeadline();
  bool commit_sent = false;
  PipelinedCommitResult result = Exchange(session, connection, write, commit_sent);
  if (armed.Disarm()) {
    // The deadline shut the socket down: the session is done for.
    result.discard_session = true;
    if (!result.status.ok()) {
      result.status = NoReplyStatus(commit_sent ? kCommitContext : kWriteContext,
                                    session.read_timeout);
    }
  }
  return result;
}

}  // namespace ledger::postgres_internal
