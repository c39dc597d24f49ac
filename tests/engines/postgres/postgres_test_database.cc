#include "tests/engines/postgres/postgres_test_database.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/conformance/conformance_context.h"

namespace ledger::testing {
namespace {

std::string ServerDsn() { return EnvironmentOrEmpty(kPostgresDsnVariable); }

// The same server and credentials, another database. URIs get their path replaced;
// keyword strings get a trailing dbname= (libpq takes the last value of a keyword).
std::string DsnForDatabase(const std::string& dsn, const std::string& database) {
  const size_t scheme_end = dsn.find("://");
  if (scheme_end == std::string::npos) return absl::StrCat(dsn, " dbname=", database);
  const size_t query = dsn.find('?', scheme_end);
  const std::string before_query = dsn.substr(0, query);
  const std::string query_part = query == std::string::npos ? "" : dsn.substr(query);
  const size_t path = before_query.find('/', scheme_end + 3);
  return absl::StrCat(before_query.substr(0, path), "/", database, query_part);
}

absl::Status RunOn(const std::string& dsn, std::initializer_list<std::string> statements) {
  try {
    pqxx::connection connection(dsn);
    pqxx::nontransaction work(connection);
    for (const std::string& sql : statements) work.exec(sql);
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("postgres test database: ", e.what()));
  }
}

class PrivateDatabase {
 public:
  absl::StatusOr<std::string> Dsn() {
    absl::MutexLock lock(&mutex_);
    if (!created_) {
      const std::string quoted = absl::StrCat("\"", name_, "\"");
      // A database left by a crashed process that had the same pid goes first.
      if (absl::Status s =
              RunOn(ServerDsn(), {absl::StrCat("DROP DATABASE IF EXISTS ", quoted, " WITH (FORCE)"),
                                  absl::StrCat("CREATE DATABASE ", quoted)});
          !s.ok()) {
        return s;
      }
      created_ = true;
    }
    return DsnForDatabase(ServerDsn(), name_);
  }

  void DropIfCreated() {
    absl::MutexLock lock(&mutex_);
    if (!created_) return;
    absl::Status dropped =
        RunOn(ServerDsn(), {absl::StrCat("DROP DATABASE IF EXISTS \"", name_, "\" WITH (FORCE)")});
    if (!dropped.ok()) ADD_FAILURE() << dropped;
    created_ = false;
  }

 private:
  absl::Mutex mutex_;
  const std::string name_ = absl::StrCat("ledger_test_", getpid());
  bool created_ ABSL_GUARDED_BY(mutex_) = false;
};

PrivateDatabase& Database() {
  static PrivateDatabase* database = new PrivateDatabase();  // lives for the process
  return *database;
}

class DropDatabaseAtExit : public ::testing::Environment {
 public:
  void TearDown() override { Database().DropIfCreated(); }
};

[[maybe_unused]] ::testing::Environment* const kDropDatabaseAtExit =
    ::testing::AddGlobalTestEnvironment(new DropDatabaseAtExit());

}  // namespace

std::string PostgresUnavailableReason() {
  if (!ServerDsn().empty()) return "";
  return absl::StrCat(kPostgresDsnVariable,
                      " is not set; start a server with `scripts/test-servers.sh start DIR` "
                      "and source DIR/env");
}

absl::StatusOr<std::string> PostgresTestDsn() { return Database().Dsn(); }

absl::Status ResetPostgresTestDatabase() {
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  if (!dsn.ok()) return dsn.status();
  return RunOn(*dsn, {"DROP SCHEMA IF EXISTS public CASCADE", "CREATE SCHEMA public"});
}

absl::StatusOr<std::unique_ptr<Engine>> OpenFreshPostgresEngine(PostgresClaimMode claim_mode,
                                                                int pool_size,
                                                                const std::string& dsn_suffix) {
  if (absl::Status reset = ResetPostgresTestDatabase(); !reset.ok()) return reset;
  return OpenPostgresTestEngine(claim_mode, pool_size, dsn_suffix, /*migrate=*/true);
}

absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresTestEngine(PostgresClaimMode claim_mode,
                                                               int pool_size,
                                                               const std::string& dsn_suffix,
                                                               bool migrate) {
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  if (!dsn.ok()) return dsn.status();
  std::string connection = *dsn;
  // "?claim=row" joins a query the server DSN may already have.
  const bool has_query = connection.find('?') != std::string::npos;
  if (has_query && !dsn_suffix.empty() && dsn_suffix.front() == '?') {
    absl::StrAppend(&connection, "&", dsn_suffix.substr(1));
  } else {
    absl::StrAppend(&connection, dsn_suffix);
  }
  PostgresOptions options;
  options.connection = connection;
  options.claim_mode = claim_mode;
  options.pool_size = pool_size;
  options.migrate = migrate;
  return OpenPostgresEngine(options);
}

absl::StatusOr<std::string> QueryPostgresValue(const std::string& sql) {
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  if (!dsn.ok()) return dsn.status();
  try {
    pqxx::connection connection(*dsn);
    pqxx::nontransaction work(connection);
    const pqxx::result rows = work.exec(sql);
    if (rows.empty() || rows[0].empty() || rows[0][0].is_null()) return std::string();
    return rows[0][0].as<std::string>();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("postgres test query failed: ", e.what()));
  }
}

bool WaitOnPostgresServerUntil(const std::string& condition_sql) {
  // pg_stat_clear_snapshot makes each poll see fresh activity statistics.
  absl::StatusOr<std::string> satisfied = QueryPostgresValue(absl::StrCat(
      "DO $$ BEGIN FOR poll IN 1..12000 LOOP PERFORM pg_stat_clear_snapshot(); EXIT WHEN ",
      condition_sql, "; PERFORM pg_sleep(0.005); END LOOP; END $$;", "SELECT ", condition_sql));
  return satisfied.ok() && *satisfied == "t";
}

std::string TerminatePostgresBackends(const std::string& state) {
  absl::StatusOr<std::string> terminated = QueryPostgresValue(absl::StrCat(
      "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 60000)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid()",
      state.empty() ? "" : absl::StrCat(" AND state = '", state, "'")));
  return terminated.ok() ? *terminated : terminated.status().ToString();
}

void AddPostgresServerControls(ConformanceContext& context, const std::string& schema) {
  const std::string in_schema = schema.empty() ? "" : "SET search_path TO " + schema + ";";
  context.kill_sessions = []() -> absl::Status {
    const std::string terminated = TerminatePostgresBackends();
    if (terminated.empty() || !std::all_of(terminated.begin(), terminated.end(), ::isdigit)) {
      return absl::InternalError(absl::StrCat("terminating the backends failed: ", terminated));
    }
    return absl::OkStatus();
  };
  context.await_lock_waiters = [](int count) -> absl::Status {
    // A row lock wait is a wait for the holder's transaction id: wait_event_type Lock.
    if (WaitOnPostgresServerUntil(absl::StrCat(
            "(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock') >= ",
            count))) {
      return absl::OkStatus();
    }
    return absl::DeadlineExceededError(absl::StrCat("fewer than ", count, " lock waiters"));
  };
  // NOT VALID: the rows already there are not checked, every new one is, at COMMIT.
  context.fail_commits = [in_schema]() {
    return QueryPostgresValue(
               in_schema + "CREATE TABLE commit_checks (transaction_id TEXT COLLATE \"C\" PRIMARY KEY);"
               "ALTER TABLE transactions ADD CONSTRAINT transactions_commit_check"
               " FOREIGN KEY (id) REFERENCES commit_checks (transaction_id)"
               " DEFERRABLE INITIALLY DEFERRED NOT VALID")
        .status();
  };
  context.stop_failing_commits = [in_schema]() {
    return QueryPostgresValue(
               in_schema + "ALTER TABLE transactions DROP CONSTRAINT transactions_commit_check;"
               "DROP TABLE commit_checks")
        .status();
  };
}

}  // namespace ledger::testing
