#include "tests/engines/mysql/mysql_test_server.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "engines/mysql/mysql_engine.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_context.h"

namespace ledger::testing {
namespace {

using mysql_internal::ErrorContext;
using mysql_internal::MysqlConnection;
using mysql_internal::SqlRow;

// The ledger's tables, children before parents (foreign keys are off while emptying
// anyway, but the order keeps that honest).
constexpr const char* kLedgerTables[] = {"entries",      "holds",          "outbox_events",
                                         "idempotency_keys", "transactions", "accounts",
                                         "assets",       "webhook_events", "work_claims"};

std::string Quoted(std::string_view identifier) {
  return absl::StrCat("`", View(identifier), "`");
}

}  // namespace

std::string MysqlTestDsn() { return EnvironmentOrEmpty(kMysqlDsnVariable); }

std::string MysqlUnavailableReason() {
  if (!MysqlTestDsn().empty()) return "";
  return absl::StrCat(kMysqlDsnVariable,
                      " is not set (start a server with scripts/test-servers.sh start DIR,"
                      " then . DIR/env)");
}

std::string ScratchDatabaseName(std::string_view base, std::string_view purpose) {
  return absl::StrCat(View(base), "_", View(purpose), "_", getpid());
}

absl::StatusOr<std::unique_ptr<MysqlTestServer>> MysqlTestServer::Connect(std::string_view dsn) {
  LEDGER_ASSIGN_OR_RETURN(mysql_internal::MysqlSettings settings,
                          mysql_internal::ParseMysqlUrl(dsn));
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> connection,
                          MysqlConnection::Open(settings));
  return std::unique_ptr<MysqlTestServer>(
      new MysqlTestServer(std::move(settings), std::move(connection)));
}

std::string MysqlTestServer::DsnFor(std::string_view database) const {
  std::string credentials = settings_.user;
  if (!settings_.password.empty()) absl::StrAppend(&credentials, ":", settings_.password);
  return absl::StrCat("mysql://", credentials, "@", settings_.host, ":", settings_.port, "/",
                      View(database));
}

absl::Status MysqlTestServer::Execute(const std::string& sql) {
  LEDGER_RETURN_IF_ERROR(connection_->ExecuteText(sql, sql, ErrorContext::kStandalone));
  return connection_->Commit(ErrorContext::kStandalone);
}

absl::StatusOr<std::string> MysqlTestServer::QueryText(const std::string& sql) {
  std::string text;
  bool first = true;
  LEDGER_RETURN_IF_ERROR(connection_->Query(
      sql, {},
      [&](const SqlRow& row) {
        if (first) text = row.IsNull(0) ? "NULL" : row.String(0);
        first = false;
      },
      sql, ErrorContext::kStandalone));
  LEDGER_RETURN_IF_ERROR(connection_->Commit(ErrorContext::kStandalone));
  return text;
}

absl::StatusOr<std::string> MysqlTestServer::RecreateDatabase(std::string_view database) {
  LEDGER_RETURN_IF_ERROR(DropDatabase(database));
  LEDGER_RETURN_IF_ERROR(Execute(absl::StrCat("CREATE DATABASE ", Quoted(database),
                                              " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")));
  return DsnFor(database);
}

absl::Status MysqlTestServer::DropDatabase(std::string_view database) {
  return Execute(absl::StrCat("DROP DATABASE IF EXISTS ", Quoted(database)));
}

absl::Status MysqlTestServer::EmptyLedgerTables(std::string_view database) {
  LEDGER_RETURN_IF_ERROR(connection_->ExecuteText("SET SESSION foreign_key_checks = 0",
                                                  "foreign keys off", ErrorContext::kStandalone));
  absl::Status status;
  for (const char* table : kLedgerTables) {
    status = connection_->ExecuteText(
        absl::StrCat("DELETE FROM ", Quoted(database), ".", table), "empty a table",
        ErrorContext::kStandalone);
    if (!status.ok()) break;
  }
  if (status.ok()) status = connection_->Commit(ErrorContext::kStandalone);
  if (!status.ok()) connection_->Rollback();
  absl::Status restored = connection_->ExecuteText(
      "SET SESSION foreign_key_checks = 1", "foreign keys on", ErrorContext::kStandalone);
  return status.ok() ? restored : status;
}

absl::StatusOr<std::vector<int64_t>> MysqlTestServer::SessionIds(const std::string& sql) {
  std::vector<int64_t> ids;
  LEDGER_RETURN_IF_ERROR(connection_->Query(
      sql, {}, [&](const SqlRow& row) { ids.push_back(row.Int64(0)); }, "list sessions",
      ErrorContext::kStandalone));
  LEDGER_RETURN_IF_ERROR(connection_->Commit(ErrorContext::kStandalone));
  return ids;
}

absl::StatusOr<std::vector<int64_t>> MysqlTestServer::SessionsInTransaction(
    std::string_view database) {
  // INNODB_TRX lists the transactions; MariaDB may leave out one that is waiting for a
  // lock, so a session running a statement counts too (the engine runs with autocommit
  // off: every statement it runs is inside a transaction).
  return SessionIds(absl::StrCat(
      "SELECT p.ID FROM information_schema.PROCESSLIST p WHERE p.DB = '", View(database),
      "' AND p.ID <> CONNECTION_ID() AND (p.COMMAND IN ('Query', 'Execute') OR p.ID IN"
      " (SELECT t.trx_mysql_thread_id FROM information_schema.INNODB_TRX t)) ORDER BY p.ID"));
}

absl::StatusOr<std::vector<int64_t>> MysqlTestServer::Sessions(std::string_view database) {
  return SessionIds(absl::StrCat("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '",
                                 View(database), "' AND ID <> CONNECTION_ID() ORDER BY ID"));
}

absl::Status MysqlTestServer::Kill(int64_t session_id) {
  return connection_->ExecuteText(absl::StrCat("KILL ", session_id), "kill a session",
                                  ErrorContext::kStandalone);
}

absl::StatusOr<std::unique_ptr<Engine>> MysqlScratchDatabase::OpenFresh() {
  absl::MutexLock lock(&mutex_);
  LEDGER_RETURN_IF_ERROR(ConnectLocked());
  if (dsn_.empty()) {
    name_ = ScratchDatabaseName(server_->base_database(), purpose_);
    LEDGER_ASSIGN_OR_RETURN(dsn_, server_->RecreateDatabase(name_));
  } else {
    LEDGER_RETURN_IF_ERROR(WithReconnect([&] { return server_->EmptyLedgerTables(name_); }));
  }
  MysqlOptions options;
  options.connection = dsn_;
  options.pool_size = pool_size_;
  options.migrate = true;  // the first open creates the schema, later ones find it
  return OpenMysqlEngine(options);
}

absl::StatusOr<std::unique_ptr<Engine>> MysqlScratchDatabase::OpenAgain() {
  absl::MutexLock lock(&mutex_);
  if (dsn_.empty()) return absl::FailedPreconditionError("OpenAgain before OpenFresh");
  MysqlOptions options;
  options.connection = dsn_;
  options.pool_size = 2;
  options.migrate = false;
  return OpenMysqlEngine(options);
}

absl::StatusOr<int> MysqlScratchDatabase::Kill(bool one_busy_at_random) {
  absl::MutexLock lock(&mutex_);
  LEDGER_RETURN_IF_ERROR(ConnectLocked());
  std::vector<int64_t> sessions;
  LEDGER_RETURN_IF_ERROR(WithReconnect([&]() -> absl::Status {
    absl::StatusOr<std::vector<int64_t>> listed =
        one_busy_at_random ? server_->SessionsInTransaction(name_) : server_->Sessions(name_);
    if (listed.ok() && listed->empty() && one_busy_at_random) listed = server_->Sessions(name_);
    if (!listed.ok()) return listed.status();
    sessions = *std::move(listed);
    return absl::OkStatus();
  }));
  if (one_busy_at_random && sessions.size() > 1) {
    sessions = {sessions[random_() % sessions.size()]};
  }
  int killed = 0;
  for (int64_t session : sessions) {
    // A session that ended meanwhile is not an error: it is gone either way.
    if (server_->Kill(session).ok()) ++killed;
  }
  return killed;
}

absl::Status MysqlScratchDatabase::AwaitLockWaiters(int count) {
  absl::MutexLock lock(&mutex_);
  LEDGER_RETURN_IF_ERROR(ConnectLocked());
  const std::string sql = absl::StrCat(
      "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p"
      " ON p.ID = t.trx_mysql_thread_id WHERE t.trx_state = 'LOCK WAIT' AND p.DB = '",
      name_, "'");
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (absl::Now() < deadline) {
    LEDGER_ASSIGN_OR_RETURN(std::string waiting, server_->QueryText(sql));
    if (std::stoi(waiting) >= count) return absl::OkStatus();
    // InnoDB refreshes the view only when nobody read it for 100 ms: polling faster
    // would keep it stale for good.
    absl::SleepFor(absl::Milliseconds(150));
  }
  return absl::DeadlineExceededError(absl::StrCat("fewer than ", count, " lock waiters"));
}

void MysqlScratchDatabase::Drop() {
  absl::MutexLock lock(&mutex_);
  if (server_ == nullptr || name_.empty()) return;
  (void)WithReconnect([&] { return server_->DropDatabase(name_); });
  server_.reset();
}

absl::Status MysqlScratchDatabase::ConnectLocked() {
  if (server_ != nullptr) return absl::OkStatus();
  LEDGER_ASSIGN_OR_RETURN(server_, MysqlTestServer::Connect(MysqlTestDsn()));
  return absl::OkStatus();
}

absl::Status MysqlScratchDatabase::WithReconnect(const std::function<absl::Status()>& action) {
  absl::Status status = action();
  if (status.ok()) return status;
  server_.reset();
  LEDGER_RETURN_IF_ERROR(ConnectLocked());
  return action();
}

MysqlScratchDatabase* ScratchDatabaseDroppedAtExit(std::string purpose, int pool_size) {
  // Lives for the process: the environment's TearDown drops the database while the
  // driver still lives.
  auto* scratch = new MysqlScratchDatabase(std::move(purpose), pool_size);
  class DropScratchDatabase : public ::testing::Environment {
   public:
    explicit DropScratchDatabase(MysqlScratchDatabase& scratch) : scratch_(scratch) {}
    void TearDown() override { scratch_.Drop(); }

   private:
    MysqlScratchDatabase& scratch_;
  };
  ::testing::AddGlobalTestEnvironment(new DropScratchDatabase(*scratch));
  return scratch;
}

}  // namespace ledger::testing
