#include "engines/postgres/postgres_pipeline.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
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

// The protocol's Bind counts a query's parameters in an int16.
constexpr size_t kParametersMax = 65535;

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
// libpq: the caller's reply deadline bounds it. `read`, when given, gets the rows of a
// query that ran while they are held; its failure goes to `read_status` (kept: the
// first one).
Answer NextAnswer(PGconn* connection,
                  const std::function<absl::Status(const PGresult*)>* read = nullptr,
                  absl::Status* read_status = nullptr) {
  PGresult* result = PQgetResult(connection);
  if (result == nullptr) {
    Answer nothing;
    nothing.message = PQerrorMessage(connection);
    return nothing;
  }
  Answer answer = AnswerOf(result);
  if (answer.status == PGRES_TUPLES_OK && read != nullptr && *read && read_status->ok()) {
    *read_status = (*read)(result);
  }
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

// libpq's own failure (no SQLSTATE) in `context`, as libpq tells it.
absl::Status LibpqFailure(PGconn* connection, const PostgresErrorContext& context) {
  return StatusFromLibpqFailure(context, ConnectionBad(connection), PQerrorMessage(connection));
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

// Per query, whether its statement is prepared in this pipeline: a named one on its
// first use in the session (and only once when the pipeline uses it twice).
std::vector<bool> Preparing(const PostgresSession& session,
                            const std::vector<PipelinedQuery>& queries) {
  std::vector<bool> preparing(queries.size(), false);
  for (size_t index = 0; index < queries.size(); ++index) {
    const char* statement = queries[index].statement;
    if (session.pipelined_statements.contains(statement)) continue;
    bool earlier = false;
    for (size_t before = 0; before < index && !earlier; ++before) {
      earlier = preparing[before] && std::string_view(queries[before].statement) == statement;
    }
    preparing[index] = !earlier;
  }
  return preparing;
}

// The status COMMIT answered with (PGRES_COMMAND_OK or an error).
absl::Status CommitStatus(const Answer& commit) {
  if (commit.command == "COMMIT") return absl::OkStatus();
  // The server rolled back instead: the transaction had failed, which no statement of
  // it reported. Nothing was committed.
  return absl::InternalError("postgres: commit: the server answered " + commit.command +
                             ", not COMMIT");
}

// The answers, in order: per query its Parse's (on first use) and its own; then the
// Sync. `commit_sent`: whether a COMMIT went out (a loss is then in doubt).
PipelineResult ReadAnswers(PostgresSession& session, PGconn* connection,
                           const std::vector<PipelinedQuery>& queries,
                           const std::vector<bool>& preparing, bool commit_sent) {
  int answers_left = 0;
  for (size_t index = 0; index < queries.size(); ++index) answers_left += preparing[index] ? 2 : 1;
  PipelineResult result;
  for (size_t index = 0; index < queries.size(); ++index) {
    const PipelinedQuery& query = queries[index];
    const bool prepare = preparing[index];
    const PostgresErrorContext& lost_context = commit_sent ? kCommitContext : query.context;
    for (int step = prepare ? 0 : 1; step < 2; ++step) {
      absl::Status read_status;
      const Answer answer = step == 0 ? NextAnswer(connection)
                                      : NextAnswer(connection, &query.read, &read_status);
      --answers_left;
      const bool ran = answer.status == PGRES_COMMAND_OK || answer.status == PGRES_TUPLES_OK;
      if (ran) {
        if (step == 0) {
          session.pipelined_statements.insert(query.statement);
          continue;
        }
        if (query.commits) {
          if (result.status.ok()) result.status = CommitStatus(answer);
        } else if (!read_status.ok() && result.status.ok()) {
          result.status = read_status;
        }
        continue;
      }
      if (answer.status != PGRES_FATAL_ERROR || answer.sql_state.empty()) {
        // No answer from the server (or one that makes no sense).
        return {StatusFromLibpqFailure(lost_context, ConnectionBad(connection), answer.message),
                /*discard_session=*/true, index, /*answered=*/index};
      }
      // The server refused this query (or its Parse): the pipeline is aborted, nothing
      // after it ran, COMMIT included.
      absl::Status refused =
          query.commits ? StatusFromServerError(kCommitContext, answer.sql_state, answer.message)
          : query.refused ? query.refused(answer.sql_state, answer.detail, answer.message)
                          : StatusFromServerError(query.context, answer.sql_state, answer.message);
      LEDGER_CHECK(!refused.ok()) << "a refused query mapped to OK: " << answer.message;
      const bool finished = FinishAbortedPipeline(connection, answers_left);
      return {std::move(refused), /*discard_session=*/!finished, index, /*answered=*/index};
    }
  }
  result.ran = queries.size();
  result.answered = queries.size();
  // Whatever the queries answered, the Sync follows; a session that does not get back
  // to idle serves nothing more.
  const bool synced = NextAnswer(connection).status == PGRES_PIPELINE_SYNC &&
                      PQexitPipelineMode(connection) == 1;
  result.discard_session = !synced;
  return result;
}

// Queues a prepared statement's Bind + Execute, each parameter in its own format (binary
// arrays and elements carry their length: they hold zero bytes; a NULL element is a null
// pointer). Results come back as text.
bool SendPrepared(PGconn* connection, const PipelinedQuery& query) {
  size_t count = 0;
  for (const PipelineParameter& parameter : query.parameters) count += parameter.Width();
  LEDGER_CHECK(count <= kParametersMax) << "a query of " << count << " parameters";
  std::vector<const char*> values(count);
  std::vector<int> lengths(count);
  std::vector<int> formats(count);
  size_t index = 0;
  // A value's length fits the int: a text parameter's is checked here, an element's was
  // by its array's writer.
  const auto add = [&](const char* value, size_t length, bool binary) {
    values[index] = value;
    lengths[index] = static_cast<int>(length);  // ignored for text
    formats[index] = binary ? 1 : 0;
    ++index;
  };
  for (const PipelineParameter& parameter : query.parameters) {
    if (!parameter.elements_of.has_value()) {
      LEDGER_CHECK(parameter.value.size() <= static_cast<size_t>(std::numeric_limits<int>::max()))
          << "a parameter of " << parameter.value.size() << " bytes";
      add(parameter.value.c_str(), parameter.value.size(), parameter.binary);
      continue;
    }
    ForEachElement(*parameter.elements_of, [&](std::optional<std::string_view> element) {
      element.has_value() ? add(element->data(), element->size(), true) : add(nullptr, 0, true);
    });
  }
  LEDGER_CHECK(index == count) << "parameters " << index << " of " << count << " given";
  return PQsendQueryPrepared(connection, query.statement, static_cast<int>(count), values.data(),
                             lengths.data(), formats.data(), /*resultFormat=*/0) == 1;
}

// Sends the pipeline and reads its answers. `commit_sent`: set once COMMIT was handed
// to libpq, from when a loss is in doubt.
PipelineResult Exchange(PostgresSession& session, PGconn* connection,
                        const std::vector<PipelinedQuery>& queries, bool& commit_sent) {
  if (PQenterPipelineMode(connection) != 1) {
    return {LibpqFailure(connection, queries.front().context), true, 0};
  }
  const std::vector<bool> preparing = Preparing(session, queries);
  for (size_t sending = 0; sending < queries.size(); ++sending) {
    const PipelinedQuery& query = queries[sending];
    if (query.commits) commit_sent = true;
    const PostgresErrorContext& context = commit_sent ? kCommitContext : query.context;
    LEDGER_CHECK(query.statement != nullptr) << "a pipelined query without a statement name";
    if (preparing[sending]) {
      LEDGER_CHECK(!query.sql.empty()) << "no text to prepare " << query.statement << " from";
      const std::string sql(query.sql);
      if (PQsendPrepare(connection, query.statement, sql.c_str(), 0, nullptr) != 1) {
        return {LibpqFailure(connection, context), true, sending};
      }
    }
    if (!SendPrepared(connection, query)) return {LibpqFailure(connection, context), true, sending};
  }
  if (PQpipelineSync(connection) != 1) {
    return {LibpqFailure(connection, commit_sent ? kCommitContext : queries.back().context), true,
            queries.size() - 1};
  }
  return ReadAnswers(session, connection, queries, preparing, commit_sent);
}

}  // namespace

PipelineResult RunPipeline(PostgresSession& session, std::vector<PipelinedQuery>& queries) {
  LEDGER_CHECK(!queries.empty()) << "an empty pipeline";
  // What the server said while the session sat idle (in a transaction: a termination)
  // is read first: a session already lost fails before anything is sent, Unavailable
  // as before, not in doubt.
  PGconn* connection = session.handle->libpq();
  if (connection == nullptr || !SessionLooksAlive(session) || ConnectionBad(connection)) {
    return {StatusFromLibpqFailure(queries.front().context, /*connection_lost=*/true,
                                   "the server ended the session"),
            /*discard_session=*/true};
  }
  ReplyWatchdog::Armed armed = session.ArmReplyDeadline();
  bool commit_sent = false;
  PipelineResult result = Exchange(session, connection, queries, commit_sent);
  if (armed.Disarm()) {
    // The deadline shut the socket down: the session is done for.
    result.discard_session = true;
    if (!result.status.ok()) {
      const size_t awaited = std::min(result.ran, queries.size() - 1);
      result.status = NoReplyStatus(commit_sent ? kCommitContext : queries[awaited].context,
                                    session.read_timeout);
    }
  }
  return result;
}

PipelinedQuery BeginQuery(const PostgresErrorContext& context) {
  return {.statement = kBeginStatement, .sql = kBeginReadCommitted, .context = context};
}

PipelineResult SendWrite(PostgresSession& session, PipelinedWrite write) {
  LEDGER_CHECK(write.statement != nullptr && write.short_write) << "an incomplete PipelinedWrite";
  const WriteStatement& statement = *write.statement;
  const bool rows_inline = statement.shape.inline_rows.has_value();
  std::vector<PipelinedQuery> queries;
  if (write.begin) queries.push_back(BeginQuery(kWriteContext));
  for (PipelinedQuery& query : write.ahead) queries.push_back(std::move(query));
  queries.emplace_back();
  PipelinedQuery& written = queries.back();
  written.statement = statement.name.c_str();
  written.sql = statement.sql;
  written.parameters.reserve(write.parameters.size());
  for (BinaryArray& array : write.parameters) {
    written.parameters.push_back(rows_inline ? PipelineParameter::ElementsOf(std::move(array))
                                             : PipelineParameter(std::move(array)));
  }
  size_t width = 0;
  for (const PipelineParameter& parameter : written.parameters) width += parameter.Width();
  LEDGER_CHECK(width == static_cast<size_t>(statement.parameter_count))
      << statement.name << " takes " << statement.parameter_count << " values, not " << width;
  written.context = kWriteContext;
  written.read = [](const PGresult* rows) {
    LEDGER_CHECK(PQntuples(rows) == 1) << "the checked write returned " << PQntuples(rows)
                                       << " rows, not its one row of counts";
    return absl::OkStatus();
  };
  written.refused = [&write](std::string_view sql_state, std::string_view detail,
                             std::string_view message) {
    return sql_state == kShortWriteSqlState
               ? write.short_write(detail)
               : StatusFromServerError(kWriteContext, std::string(sql_state), std::string(message));
  };
  if (write.commit) {
    queries.push_back({.statement = kCommitStatement, .sql = kCommit, .context = kCommitContext,
                       .commits = true});
  }
  return RunPipeline(session, queries);
}

}  // namespace ledger::postgres_internal
