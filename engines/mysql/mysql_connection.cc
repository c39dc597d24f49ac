#include "engines/mysql/mysql_connection.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include <cppconn/connection.h>
#include <cppconn/datatype.h>
#include <cppconn/driver.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "engines/mysql/mysql_statements.h"

namespace ledger::mysql_internal {
namespace {

constexpr std::string_view kUrlScheme = "mysql://";
constexpr int kClientTlsError = 2026;  // CR_SSL_CONNECTION_ERROR

// get_driver_instance() is not thread-safe: it runs once, before any connection. The
// driver lives as long as the process and is never deleted.
sql::Driver& Driver() {
  static std::once_flag once;
  static sql::Driver* driver = nullptr;
  std::call_once(once, [] { driver = sql::mysql::get_driver_instance(); });
  return *driver;
}

// The client library keeps per-thread state: each thread that talks to the server
// calls threadInit once, and threadEnd when it exits (this guard's destructor).
class DriverThreadGuard {
 public:
  DriverThreadGuard() { Driver().threadInit(); }
  ~DriverThreadGuard() { Driver().threadEnd(); }
};

void EnsureDriverThreadInitialized() { thread_local DriverThreadGuard guard; }

absl::StatusOr<std::string> PercentDecoded(std::string_view text) {
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      decoded.push_back(text[i]);
      continue;
    }
    int value = 0;
    if (i + 2 >= text.size()) {
      return absl::InvalidArgumentError("mysql url: truncated percent escape");
    }
    if (!absl::SimpleHexAtoi(absl::string_view(text.data() + i + 1, 2), &value)) {
      return absl::InvalidArgumentError("mysql url: bad percent escape");
    }
    decoded.push_back(static_cast<char>(value));
    i += 2;
  }
  return decoded;
}

absl::Status ParseUserInfo(std::string_view user_info, MysqlSettings& settings) {
  size_t colon = user_info.find(':');
  LEDGER_ASSIGN_OR_RETURN(settings.user, PercentDecoded(user_info.substr(0, colon)));
  if (colon != std::string_view::npos) {
    LEDGER_ASSIGN_OR_RETURN(settings.password, PercentDecoded(user_info.substr(colon + 1)));
  }
  if (settings.user.empty()) return absl::InvalidArgumentError("mysql url: no user");
  return absl::OkStatus();
}

absl::Status ParseHostPort(std::string_view host_port, MysqlSettings& settings) {
  size_t colon = host_port.rfind(':');
  if (!host_port.empty() && host_port.front() == '[') {  // [IPv6]:port
    size_t close = host_port.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("mysql url: unclosed '[' in host");
    }
    colon = host_port.find(':', close);
  }
  settings.host = std::string(host_port.substr(0, colon));
  if (colon != std::string_view::npos) {
    std::string_view port = host_port.substr(colon + 1);
    if (!absl::SimpleAtoi(absl::string_view(port.data(), port.size()), &settings.port) ||
        settings.port <= 0 || settings.port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("mysql url: bad port '", View(port), "'"));
    }
  }
  if (settings.host.empty()) return absl::InvalidArgumentError("mysql url: no host");
  return absl::OkStatus();
}

std::string ConnectorHostName(const MysqlSettings& settings) {
  // "tcp://" forces TCP; Connector/C++ would otherwise treat "localhost" as the socket.
  return absl::StrCat("tcp://", settings.host, ":", settings.port);
}

}  // namespace

std::string MysqlSettings::Describe() const {
  return absl::StrCat(user, "@", host, ":", port, "/", database);
}

const std::vector<std::string_view>& MysqlUrlParameters() {
  static const std::vector<std::string_view> parameters = {
      "pool_acquire_wait", "connect_timeout", "account_lock_wait", "statement_timeout",
      "read_timeout",      "write_timeout",   "ssl_mode",          "ssl_ca",
      "ssl_capath",        "ssl_cert",        "ssl_key",
      "migration_lock_wait", "create_database"};
  return parameters;
}

int MysqlWaits::AccountLockWaitSeconds() const {
  return static_cast<int>(std::min<int64_t>(
      engine_common::WholeSecondsRoundedUp(account_lock_wait, kLockWaitSecondsMin),
      kLockWaitSecondsMax));
}

namespace {

absl::Status ParseAddress(std::string_view url, MysqlSettings& settings) {
  std::string_view rest = url.substr(kUrlScheme.size());
  size_t at = rest.rfind('@');
  if (at == std::string_view::npos) {
    return absl::InvalidArgumentError("mysql url: expected user@host (mysql://user@host/db)");
  }
  if (rest.find('#', at) != std::string_view::npos) {
    return absl::InvalidArgumentError("mysql url: a fragment (#...) is not supported");
  }
  size_t slash = rest.find('/', at);
  if (slash == std::string_view::npos || slash + 1 == rest.size()) {
    return absl::InvalidArgumentError("mysql url: no database (mysql://user@host/db)");
  }
  LEDGER_RETURN_IF_ERROR(ParseUserInfo(rest.substr(0, at), settings));
  LEDGER_RETURN_IF_ERROR(ParseHostPort(rest.substr(at + 1, slash - at - 1), settings));
  LEDGER_ASSIGN_OR_RETURN(settings.database, PercentDecoded(rest.substr(slash + 1)));
  return absl::OkStatus();
}

absl::StatusOr<MysqlTlsMode> ParseTlsMode(std::string_view value) {
  // Any case: MySQL 8 spells them in capitals (--ssl-mode=VERIFY_CA).
  const std::string name = absl::AsciiStrToLower(View(value));
  for (MysqlTlsMode mode : {MysqlTlsMode::kDisabled, MysqlTlsMode::kRequired,
                            MysqlTlsMode::kVerifyCa, MysqlTlsMode::kVerifyIdentity}) {
    if (name == TlsModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("mysql url: unknown ssl_mode \"", View(value),
                   "\" (use disabled, required, verify_ca or verify_identity)"));
}

absl::Status ApplyParameter(const std::string& name, const std::string& value,
                            MysqlSettings& settings) {
  const std::pair<std::string_view, absl::Duration*> waits[] = {
      {"pool_acquire_wait", &settings.waits.pool_acquire_wait},
      {"connect_timeout", &settings.waits.connect_timeout},
      {"account_lock_wait", &settings.waits.account_lock_wait},
      {"statement_timeout", &settings.waits.statement_timeout},
      {"read_timeout", &settings.waits.read_timeout},
      {"write_timeout", &settings.waits.write_timeout},
      {"migration_lock_wait", &settings.waits.migration_lock_wait}};
  for (const auto& [wait_name, field] : waits) {
    if (name != wait_name) continue;
    LEDGER_ASSIGN_OR_RETURN(*field, engine_common::ParseWaitParameter("mysql", name, value));
    return absl::OkStatus();
  }
  if (name == "create_database") {
    if (value != "true" && value != "false") {
      return absl::InvalidArgumentError("mysql url: create_database must be true or false");
    }
    settings.create_database = value == "true";
    return absl::OkStatus();
  }
  if (name == "ssl_mode") {
    LEDGER_ASSIGN_OR_RETURN(settings.tls.mode, ParseTlsMode(value));
    return absl::OkStatus();
  }
  const std::pair<std::string_view, std::string*> files[] = {{"ssl_ca", &settings.tls.ca},
                                                             {"ssl_capath", &settings.tls.ca_path},
                                                             {"ssl_cert", &settings.tls.cert},
                                                             {"ssl_key", &settings.tls.key}};
  for (const auto& [file_name, field] : files) {
    if (name != file_name) continue;
    LEDGER_ASSIGN_OR_RETURN(*field, PercentDecoded(value));
    if (field->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("mysql url: ", name, " is empty"));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("mysql url: unknown parameter ", name));
}

absl::Status CheckWaits(const MysqlWaits& waits) {
  using engine_common::CheckWait;
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "pool_acquire_wait", waits.pool_acquire_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "connect_timeout", waits.connect_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "account_lock_wait", waits.account_lock_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "statement_timeout", waits.statement_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "read_timeout", waits.read_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "write_timeout", waits.write_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("mysql", "migration_lock_wait", waits.migration_lock_wait));
  // A lock wait runs inside a statement, and a statement inside the client's wait: each
  // bound must be shorter than the one around it, or it never gets to answer. InnoDB
  // waits whole seconds: the rounded lock wait is the one compared.
  LEDGER_RETURN_IF_ERROR(engine_common::CheckWaitExceeds(
      "mysql", "statement_timeout", waits.statement_timeout, "account_lock_wait",
      absl::Seconds(waits.AccountLockWaitSeconds())));
  return engine_common::CheckWaitExceeds("mysql", "read_timeout", waits.read_timeout,
                                         "statement_timeout", waits.statement_timeout);
}

absl::Status CheckTls(const MysqlTls& tls) {
  const bool verifies =
      tls.mode == MysqlTlsMode::kVerifyCa || tls.mode == MysqlTlsMode::kVerifyIdentity;
  if (verifies && tls.ca.empty() && tls.ca_path.empty()) {
    return absl::InvalidArgumentError(
        "mysql url: ssl_mode=verify_ca and verify_identity need ssl_ca or ssl_capath (the "
        "certificate authorities to check the server's certificate against)");
  }
  const bool files = !tls.ca.empty() || !tls.ca_path.empty() || !tls.cert.empty() ||
                     !tls.key.empty();
  if (tls.mode == MysqlTlsMode::kDisabled && files) {
    return absl::InvalidArgumentError(
        "mysql url: ssl_ca, ssl_capath, ssl_cert and ssl_key need an ssl_mode other than "
        "disabled (the default)");
  }
  if (tls.cert.empty() != tls.key.empty()) {
    return absl::InvalidArgumentError("mysql url: ssl_cert and ssl_key go together");
  }
  return absl::OkStatus();
}

// The driver's TLS options (Connector/C++ 1.1 names), as MariaDB Connector/C 3.3 (what
// Debian's build runs over) takes them. Not OPT_SSL_MODE: the driver accepts it and
// silently connects in plain text. sslEnforce is MYSQL_OPT_SSL_ENFORCE, which there only
// asks for TLS: against a server that does not offer it the library goes on in plain
// text (MysqlConnection::RequireEncryption then refuses the session). Only
// MYSQL_OPT_SSL_VERIFY_SERVER_CERT (sslVerify) makes it refuse such a server before
// the login, and it also checks the host name: verify_identity alone can have it.
void SetTlsOptions(const MysqlTls& tls, sql::ConnectOptionsMap& options) {
  if (tls.mode == MysqlTlsMode::kDisabled) return;
  options["sslEnforce"] = true;  // ask for TLS
  if (!tls.ca.empty()) options["sslCA"] = sql::SQLString(tls.ca);  // CA given: chain checked
  if (!tls.ca_path.empty()) options["sslCAPath"] = sql::SQLString(tls.ca_path);
  if (!tls.cert.empty()) options["sslCert"] = sql::SQLString(tls.cert);
  if (!tls.key.empty()) options["sslKey"] = sql::SQLString(tls.key);
  // The host name, and no TLS refused before the login.
  if (tls.mode == MysqlTlsMode::kVerifyIdentity) options["sslVerify"] = true;
}

int Seconds(absl::Duration wait) {
  return static_cast<int>(engine_common::WholeSecondsRoundedUp(wait, 1));
}

}  // namespace

std::string_view TlsModeName(MysqlTlsMode mode) {
  switch (mode) {
    case MysqlTlsMode::kDisabled:
      return "disabled";
    case MysqlTlsMode::kRequired:
      return "required";
    case MysqlTlsMode::kVerifyCa:
      return "verify_ca";
    case MysqlTlsMode::kVerifyIdentity:
      return "verify_identity";
  }
  return "unknown";
}

absl::StatusOr<MysqlSettings> ParseMysqlUrl(std::string_view url, const MysqlWaits& waits) {
  if (url.substr(0, kUrlScheme.size()) != kUrlScheme) {
    return absl::InvalidArgumentError("mysql url must start with mysql://");
  }
  // The shared parser: the query starts after the credentials, as everywhere else.
  LEDGER_ASSIGN_OR_RETURN(DatabaseUrl parsed_url, ParseDatabaseUrl(url));
  LEDGER_RETURN_IF_ERROR(CheckParameters(parsed_url, "mysql", MysqlUrlParameters()));
  MysqlSettings settings;
  settings.waits = waits;
  LEDGER_RETURN_IF_ERROR(ParseAddress(parsed_url.base, settings));
  for (const auto& [name, value] : parsed_url.parameters) {
    LEDGER_RETURN_IF_ERROR(ApplyParameter(name, value, settings));
  }
  LEDGER_RETURN_IF_ERROR(CheckWaits(settings.waits));
  LEDGER_RETURN_IF_ERROR(CheckTls(settings.tls));
  if (settings.create_database) {
    for (char c : settings.database) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
        return absl::InvalidArgumentError(
            "mysql url: with create_database=true the database name must be letters, digits "
            "and '_'");
      }
    }
  }
  return settings;
}

std::string SqlRow::String(int column) const { return result_.getString(column + 1); }

std::optional<std::string> SqlRow::OptionalString(int column) const {
  if (result_.isNull(column + 1)) return std::nullopt;
  return String(column);
}

int64_t SqlRow::Int64(int column) const { return result_.getInt64(column + 1); }

bool SqlRow::Bool(int column) const { return result_.getInt(column + 1) != 0; }

bool SqlRow::IsNull(int column) const { return result_.isNull(column + 1); }

MysqlConnection::MysqlConnection(std::unique_ptr<sql::Connection> connection,
                                 const MysqlWaits& waits)
    : connection_(std::move(connection)),
      account_lock_wait_seconds_(waits.AccountLockWaitSeconds()),
      last_used_(absl::Now()) {}

MysqlConnection::~MysqlConnection() {
  // Closing never throws past here: the destructors of the driver objects may. No
  // threadInit: closing needs none, and this may run while the process exits.
  CatchDriverErrors([&] {
    statements_.clear();
    connection_.reset();
  });
}

absl::StatusOr<std::unique_ptr<MysqlConnection>> MysqlConnection::Open(
    const MysqlSettings& settings) {
  EnsureDriverThreadInitialized();
  std::unique_ptr<sql::Connection> raw;
  std::optional<MysqlError> error = CatchDriverErrors([&] {
    sql::ConnectOptionsMap options;
    options["hostName"] = sql::SQLString(ConnectorHostName(settings));
    options["userName"] = sql::SQLString(settings.user);
    options["password"] = sql::SQLString(settings.password);
    options["schema"] = sql::SQLString(settings.database);
    options["OPT_RECONNECT"] = false;  // a silent reconnect would lose the transaction
    options["OPT_CONNECT_TIMEOUT"] = Seconds(settings.waits.connect_timeout);
    options["OPT_READ_TIMEOUT"] = Seconds(settings.waits.read_timeout);
    options["OPT_WRITE_TIMEOUT"] = Seconds(settings.waits.write_timeout);
    SetTlsOptions(settings.tls, options);
    options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    options["characterSetResults"] = sql::SQLString("utf8mb4");
    options["CLIENT_FOUND_ROWS"] = true;
    raw.reset(Driver().connect(options));
  });
  if (error.has_value()) {
    // Unreachable, refused or timed out: Unavailable; no such database, bad credentials:
    // PermissionDenied (the session was refused).
    return MysqlErrorStatus(*error, absl::StrCat("connect to ", settings.Describe()),
                            ErrorContext::kConnect);
  }
  std::unique_ptr<MysqlConnection> connection(new MysqlConnection(std::move(raw), settings.waits));
  // Before any other statement: a session that should be encrypted and is not carries
  // nothing of the ledger's (closed with `connection` on the way out).
  LEDGER_RETURN_IF_ERROR(connection->RequireEncryption(settings));
  LEDGER_RETURN_IF_ERROR(connection->SetUpSession(settings.waits));
  return connection;
}

absl::Status MysqlConnection::RequireEncryption(const MysqlSettings& settings) {
  if (settings.tls.mode == MysqlTlsMode::kDisabled) return absl::OkStatus();
  const std::string what = absl::StrCat("connect to ", settings.Describe());
  // The server's view: Connector/C++ 1.1 does not expose the client library's
  // mysql_get_ssl_cipher. MariaDB and MySQL 8 both keep Ssl_cipher per session.
  std::string cipher;
  LEDGER_RETURN_IF_ERROR(Guard(
      [&] {
        std::unique_ptr<sql::Statement> statement(connection_->createStatement());
        std::unique_ptr<sql::ResultSet> result(
            statement->executeQuery("SHOW SESSION STATUS LIKE 'Ssl_cipher'"));
        while (result->next()) cipher = result->getString(2);
      },
      what, ErrorContext::kConnect));
  if (!cipher.empty()) return absl::OkStatus();
  broken_ = true;  // never reused, whoever holds it
  // Reported as the client library reports the same refusal under verify_identity
  // (CR_SSL_CONNECTION_ERROR), so both read and sort alike.
  const MysqlError refused{
      kClientTlsError, "HY000",
      absl::StrCat("TLS/SSL error: ssl_mode=", View(TlsModeName(settings.tls.mode)),
                   " but the session is not encrypted (the server reports no Ssl_cipher): the "
                   "server does not offer TLS, or something on the way removed it; the session "
                   "was closed before any ledger statement"),
      false};
  return MysqlErrorStatus(refused, what, ErrorContext::kConnect);
}

absl::Status MysqlConnection::SetUpSession(const MysqlWaits& waits) {
  // READ COMMITTED: see docs/engines/mysql.md. Every read that decides anything is a
  // locking read or runs after the locks it depends on are held, and each statement's
  // consistent read sees what committed before it.
  LEDGER_RETURN_IF_ERROR(ExecuteText(statement::kSetReadCommitted,
                                     "set isolation level", ErrorContext::kConnect));
  LEDGER_RETURN_IF_ERROR(Query(
      statement::kSelectSessionIdAndVersion, {},
      [&](const SqlRow& row) {
        session_id_ = row.Int64(0);
        mariadb_ = absl::StrContains(row.String(1), "MariaDB");
      },
      "read connection id", ErrorContext::kConnect));
  if (mariadb_) {
    LEDGER_RETURN_IF_ERROR(Query(
        statement::kSelectWsrepOn, {}, [&](const SqlRow& row) { galera_ = row.Int64(0) != 0; },
        "read wsrep_on", ErrorContext::kConnect));
  }
  LEDGER_RETURN_IF_ERROR(ExecuteText(
      SessionVariablesSql(account_lock_wait_seconds_,
                          StatementTimeoutAssignment(mariadb_, waits.statement_timeout)),
      "set session variables", ErrorContext::kConnect));
  lock_wait_seconds_ = account_lock_wait_seconds_;
  return Commit(ErrorContext::kConnect);
}

absl::Status MysqlConnection::LiftStatementTimeout() {
  LEDGER_RETURN_IF_ERROR(ExecuteText(
      SetSessionSql(StatementTimeoutAssignment(mariadb_, absl::ZeroDuration())),
      "lift the statement timeout", ErrorContext::kStandalone));
  return Commit(ErrorContext::kStandalone);
}

absl::Status MysqlConnection::Guard(const std::function<void()>& call, std::string_view what,
                                    ErrorContext context) {
  if (broken_) {
    MysqlError gone{2006, "08S01", "the connection was lost earlier", false};
    last_error_ = gone;
    return MysqlErrorStatus(gone, what, context);
  }
  EnsureDriverThreadInitialized();
  last_used_ = absl::Now();
  std::optional<MysqlError> error = CatchDriverErrors(call);
  last_error_ = error;
  if (!error.has_value()) return absl::OkStatus();
  if (BreaksConnection(*error)) broken_ = true;
  return MysqlErrorStatus(*error, what, context);
}

sql::PreparedStatement& MysqlConnection::Prepared(std::string_view sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return *it->second;
  if (statements_.size() >= kPreparedStatementsMax) statements_.clear();
  std::unique_ptr<sql::PreparedStatement> statement(
      connection_->prepareStatement(sql::SQLString(sql.data(), sql.size())));
  return *statements_.emplace(std::string(sql), std::move(statement)).first->second;
}

namespace {

void Bind(sql::PreparedStatement& statement, const SqlParams& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    const unsigned int index = static_cast<unsigned int>(i + 1);
    if (const int64_t* number = std::get_if<int64_t>(&params[i])) {
      statement.setInt64(index, *number);
    } else if (const std::string* text = std::get_if<std::string>(&params[i])) {
      statement.setString(index, sql::SQLString(*text));
    } else {
      statement.setNull(index, sql::DataType::VARCHAR);
    }
  }
}

}  // namespace

absl::StatusOr<int64_t> MysqlConnection::Execute(std::string_view sql, const SqlParams& params,
                                                 std::string_view what, ErrorContext context) {
  int64_t matched = 0;
  LEDGER_RETURN_IF_ERROR(Guard(
      [&] {
        sql::PreparedStatement& statement = Prepared(sql);
        Bind(statement, params);
        matched = statement.executeUpdate();
      },
      what, context));
  return matched;
}

absl::Status MysqlConnection::Query(std::string_view sql, const SqlParams& params,
                                    const std::function<void(const SqlRow&)>& on_row,
                                    std::string_view what, ErrorContext context) {
  return Guard(
      [&] {
        sql::PreparedStatement& statement = Prepared(sql);
        Bind(statement, params);
        std::unique_ptr<sql::ResultSet> result(statement.executeQuery());
        SqlRow row(*result);
        while (result->next()) on_row(row);
      },
      what, context);
}

absl::Status MysqlConnection::Call(std::string_view sql, const SqlParams& params,
                                   const std::function<void(const SqlRow&)>& on_row,
                                   std::string_view what, ErrorContext context) {
  return Guard(
      [&] {
        sql::PreparedStatement& statement = Prepared(sql);
        Bind(statement, params);
        // execute() is true when a result set comes first; getMoreResults() moves on
        // to the next reply, false at the CALL's closing status.
        for (bool rows = statement.execute(); rows; rows = statement.getMoreResults()) {
          std::unique_ptr<sql::ResultSet> result(statement.getResultSet());
          SqlRow row(*result, static_cast<int>(result->getMetaData()->getColumnCount()));
          while (result->next()) {
            if (on_row) on_row(row);
          }
        }
      },
      what, context);
}

absl::Status MysqlConnection::ExecuteText(std::string_view sql, std::string_view what,
                                          ErrorContext context) {
  return Guard(
      [&] {
        std::unique_ptr<sql::Statement> statement(connection_->createStatement());
        statement->execute(sql::SQLString(sql.data(), sql.size()));
      },
      what, context);
}

absl::Status MysqlConnection::SetLockWaitSeconds(int seconds, std::string_view what,
                                                 ErrorContext context) {
  if (seconds == lock_wait_seconds_) return absl::OkStatus();
  lock_wait_seconds_ = 0;  // unknown until the SET is known to have run
  LEDGER_RETURN_IF_ERROR(ExecuteText(
      LockWaitSql(seconds), what, context));
  lock_wait_seconds_ = seconds;
  return absl::OkStatus();
}

absl::Status MysqlConnection::Commit(ErrorContext context) {
  // The text COMMIT, not Connection::commit(): its failure must surface as an error.
  return ExecuteText(statement::kCommit, "commit", context);
}

void MysqlConnection::Rollback() {
  if (broken_) return;  // the server rolled back when the session went
  absl::Status status = ExecuteText(statement::kRollback, "rollback", ErrorContext::kStandalone);
  if (!status.ok()) broken_ = true;
}

bool MysqlConnection::Ping() {
  absl::Status status = ExecuteText(statement::kPing, "ping", ErrorContext::kStandalone);
  if (!status.ok()) broken_ = true;
  return status.ok();
}

}  // namespace ledger::mysql_internal
