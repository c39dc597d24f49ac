// The claim mode and the engine's waits ride in the connection URI ("?claim=row",
// "&read_timeout=5s") so a database URL alone configures the engine (ledger migrate
// --db ..., OpenEngine(url)); libpq must never see them, as it rejects unknown ones.
#include "engines/postgres/postgres_connection.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_statements.h"
#include "libpq-fe.h"
#include "pqxx/except"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {
namespace {

constexpr int kServerVersionMin = 110000;  // hashtextextended() arrived in PostgreSQL 11

constexpr char kClaimParameter[] = "claim";
constexpr char kOneRoundTripParameter[] = "one_round_trip";

bool IsUri(const std::string& connection) {
  return absl::StartsWith(connection, "postgres://") ||
         absl::StartsWith(connection, "postgresql://");
}

absl::StatusOr<PostgresClaimMode> ParseClaimMode(absl::string_view value) {
  if (value == "advisory") return PostgresClaimMode::kAdvisoryLock;
  if (value == "row") return PostgresClaimMode::kRow;
  return absl::InvalidArgumentError(absl::StrCat("postgres: unknown claim mode \"", value,
                                                 "\" in the connection URI; use claim=advisory "
                                                 "or claim=row"));
}

// Applies one of the engine's own URI parameters to `options`; false for a libpq one.
absl::StatusOr<bool> ApplyEngineParameter(const std::string& name, const std::string& value,
                                          PostgresOptions& options) {
  if (name == kClaimParameter) {
    LEDGER_ASSIGN_OR_RETURN(options.claim_mode, ParseClaimMode(value));
    return true;
  }
  if (name == kOneRoundTripParameter) {
    if (value != "on" && value != "off") {
      return absl::InvalidArgumentError(absl::StrCat(
          "postgres: one_round_trip must be on or off, not \"", value, "\""));
    }
    options.one_round_trip = value == "on";
    return true;
  }
  if (name == kSchemaParameter) {
    LEDGER_RETURN_IF_ERROR(ValidateSchemaName("postgres", value));  // "schema=" too
    options.schema = value;
    return true;
  }
  const std::pair<std::string_view, absl::Duration*> waits[] = {
      {"account_lock_wait", &options.account_lock_wait},
      {"statement_timeout", &options.statement_timeout},
      {"read_timeout", &options.read_timeout},
      {"pool_acquire_wait", &options.pool_acquire_wait},
      {"migration_lock_wait", &options.migration_lock_wait}};
  for (const auto& [wait_name, field] : waits) {
    if (name != wait_name) continue;
    LEDGER_ASSIGN_OR_RETURN(*field, engine_common::ParseWaitParameter("postgres", name, value));
    return true;
  }
  return false;
}

absl::Status CheckWaits(const PostgresOptions& options) {
  using engine_common::CheckWait;
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "connect_timeout", options.connect_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "account_lock_wait", options.account_lock_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "statement_timeout", options.statement_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "read_timeout", options.read_timeout));
  LEDGER_RETURN_IF_ERROR(
      CheckWait("postgres", "migration_lock_wait", options.migration_lock_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "keepalives_idle", options.keepalives_idle));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "keepalives_interval", options.keepalives_interval));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "tcp_user_timeout", options.tcp_user_timeout));
  if (options.keepalives_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "postgres: keepalives_count must be at least 1, not ", options.keepalives_count));
  }
  // A lock wait runs inside a statement, and a statement inside the client's wait: each
  // bound must be shorter than the one around it, or it never gets to answer.
  LEDGER_RETURN_IF_ERROR(engine_common::CheckWaitExceeds(
      "postgres", "statement_timeout", options.statement_timeout, "account_lock_wait",
      options.account_lock_wait));
  return engine_common::CheckWaitExceeds("postgres", "read_timeout", options.read_timeout,
                                         "statement_timeout", options.statement_timeout);
}

// libpq's waits in libpq's units: seconds, tcp_user_timeout in milliseconds.
std::vector<std::pair<std::string, std::string>> LibpqWaits(const PostgresOptions& options) {
  using engine_common::WholeMillisecondsRoundedUp;
  using engine_common::WholeSecondsRoundedUp;
  constexpr int64_t kLibpqConnectTimeoutMin = 2;  // libpq reads 1 as 2
  return {
      {"connect_timeout",
       absl::StrCat(WholeSecondsRoundedUp(options.connect_timeout, kLibpqConnectTimeoutMin))},
      {"keepalives", "1"},
      {"keepalives_idle", absl::StrCat(WholeSecondsRoundedUp(options.keepalives_idle, 1))},
      {"keepalives_interval", absl::StrCat(WholeSecondsRoundedUp(options.keepalives_interval, 1))},
      {"keepalives_count", absl::StrCat(options.keepalives_count)},
      {"tcp_user_timeout", absl::StrCat(WholeMillisecondsRoundedUp(options.tcp_user_timeout))}};
}

// The connect_timeout libpq gets from the final connection string (the engine's, or the
// caller's, which wins): the whole attempt's bound (BoundedConnection). libpq reads 0 or
// less as "no bound" and 1 as 2 s; the engine refuses the former and counts the latter
// as libpq does.
absl::StatusOr<absl::Duration> EffectiveConnectTimeout(const std::string& connection) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    return absl::InvalidArgumentError(
        absl::StrCat("postgres: cannot read the connection string: ", message));
  }
  std::string value;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (std::string_view(option->keyword) == "connect_timeout" && option->val != nullptr) {
      value = option->val;
    }
  }
  PQconninfoFree(options);
  int seconds = 0;
  if (!absl::SimpleAtoi(value, &seconds) || seconds <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "postgres: connect_timeout=", value,
        " is not a whole number of seconds above 0 (libpq waits forever on 0)"));
  }
  return absl::Seconds(std::max(seconds, 2));
}

}  // namespace

const std::vector<std::string_view>& PostgresUrlParameters() {
  static const std::vector<std::string_view> parameters = {
      kClaimParameter, kOneRoundTripParameter, kSchemaParameter, "account_lock_wait", "statement_timeout", "read_timeout",
      "pool_acquire_wait", "migration_lock_wait", "application_name", "connect_timeout", "keepalives",
      "keepalives_count", "keepalives_idle", "keepalives_interval", "options", "password",
      "sslcert", "sslcrl", "sslkey", "sslmode", "sslrootcert", "target_session_attrs",
      "tcp_user_timeout", "user"};
  return parameters;
}

absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const PostgresOptions& options) {
  ParsedPostgresConnection parsed{options.connection, options};
  std::vector<std::string> kept;  // the URI's libpq parameters, as written
  std::set<std::string, std::less<>> given;
  if (IsUri(options.connection)) {
    // The shared parser: the query starts after the credentials, as everywhere else.
    LEDGER_ASSIGN_OR_RETURN(DatabaseUrl url, ParseDatabaseUrl(options.connection));
    LEDGER_RETURN_IF_ERROR(CheckParameters(url, "postgres", PostgresUrlParameters()));
    for (const auto& [name, value] : url.parameters) {
      LEDGER_ASSIGN_OR_RETURN(bool engines_own, ApplyEngineParameter(name, value, parsed.options));
      if (engines_own) continue;
      kept.push_back(absl::StrCat(name, "=", value));
      given.insert(name);
    }
    parsed.connection = url.base;
  }
  LEDGER_RETURN_IF_ERROR(CheckWaits(parsed.options));
  if (!parsed.options.schema.empty()) {
    LEDGER_RETURN_IF_ERROR(ValidateSchemaName("postgres", parsed.options.schema));
  }
  std::vector<std::string> added;
  for (const auto& [name, value] : LibpqWaits(parsed.options)) {
    if (!given.contains(name)) added.push_back(absl::StrCat(name, "=", value));
  }
  if (!IsUri(options.connection)) {
    // key=value: the later of two equal keywords wins, so the caller's own go last.
    parsed.connection = absl::StrCat(absl::StrJoin(added, " "), " ", options.connection);
  } else {
    kept.insert(kept.end(), added.begin(), added.end());
    if (!kept.empty()) absl::StrAppend(&parsed.connection, "?", absl::StrJoin(kept, "&"));
  }
  LEDGER_ASSIGN_OR_RETURN(parsed.options.connect_timeout,
                          EffectiveConnectTimeout(parsed.connection));
  return parsed;
}

absl::Status SetUpSession(PostgresSession& session, std::string_view schema) {
  if (session.connection().server_version() < kServerVersionMin) {
    return absl::FailedPreconditionError(
        absl::StrCat("postgres: server version ", session.connection().server_version(),
                     " is too old; the ledger needs PostgreSQL 11 or newer"));
  }
  session.schema = std::string(schema);
  if (!session.schema.empty()) {
    // Before any statement is prepared: names resolve in the schema alone (pg_catalog is
    // searched first whatever search_path says). The schema may not exist yet: SET
    // accepts that, and the first migration creates it.
    LEDGER_RETURN_IF_ERROR(
        GuardRoundTrip(session, {.operation = "set the session's schema"}, [&]() -> absl::Status {
          pqxx::nontransaction work(session.connection());
          work.exec(SearchPathSql(session.schema));
          return absl::OkStatus();
        }));
  }
  DeclareStatements(session.connection());
  return absl::OkStatus();
}

}  // namespace ledger::postgres_internal
