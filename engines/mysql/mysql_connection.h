// One MySQL / MariaDB session over Connector/C++ 1.1, with no exception in its API.
//
//   LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> connection,
//                           MysqlConnection::Open(settings));
//   LEDGER_ASSIGN_OR_RETURN(int64_t matched,
//       connection->Execute("UPDATE accounts SET closed = ? WHERE id = ?",
//                           {int64_t{1}, std::string("alice")}, "close account",
//                           ErrorContext::kStandalone));
//
// Every statement with parameters runs as a server-side prepared statement, prepared
// once per connection and cached by its text. Driver exceptions are caught here and
// mapped by mysql_errors.h; after an error that leaves the session unusable (lost
// connection, killed, a driver failure) the connection reports broken() and must be
// discarded. Sessions run with autocommit off, READ COMMITTED, strict SQL mode, the
// utf8mb4 character set, CLIENT_FOUND_ROWS (an UPDATE reports the rows it matched,
// not only those it changed), the settings' waits (connect, read and write timeouts on
// the client; lock wait and statement timeout on the server) and TLS.
//
// Internal to engines/mysql. Not thread-safe: one thread uses a connection at a time.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/connection_pool.h"
#include "engines/common/waits.h"
#include "engines/mysql/mysql_errors.h"
#include "ledger/caller_sql.h"

namespace sql {
class Connection;
class PreparedStatement;
class ResultSet;
}  // namespace sql

namespace ledger::mysql_internal {

// InnoDB's bounds for innodb_lock_wait_timeout.
inline constexpr int kLockWaitSecondsMin = 1;
inline constexpr int kLockWaitSecondsMax = 1'073'741'824;
// Prepared statements kept per connection; beyond it the cache starts over, so odd
// statement shapes (multi-row inserts of every size) cannot pile up on the server.
inline constexpr size_t kPreparedStatementsMax = 256;

// Every wait of a session (MysqlOptions documents each), then the URL's parameters.
struct MysqlWaits {
  absl::Duration pool_acquire_wait = engine_common::kPoolAcquireWaitDefault;
  absl::Duration connect_timeout = engine_common::kConnectTimeoutDefault;
  // The session's innodb_lock_wait_timeout outside a claim: how long a statement waits
  // for a row lock (an account, a work claim) before giving up with 1205.
  absl::Duration account_lock_wait = engine_common::kAccountLockWaitDefault;
  absl::Duration statement_timeout = engine_common::kStatementTimeoutDefault;
  absl::Duration read_timeout = engine_common::kReadTimeoutDefault;
  absl::Duration write_timeout = engine_common::kWriteTimeoutDefault;
  absl::Duration migration_lock_wait = engine_common::kMigrationLockWaitDefault;

  int AccountLockWaitSeconds() const;  // whole seconds, rounded up, InnoDB's range
};

// TLS to the server (the ssl_* URL parameters). Every mode but kDisabled refuses a
// session that is not encrypted: required encrypts without checking the certificate;
// verify_ca also checks its chain against ssl_ca / ssl_capath; verify_identity also
// checks that it names the host. With Connector/C++ 1.1 over MariaDB Connector/C
// (Debian's build) only verify_identity makes the client library refuse a server that
// does not offer TLS before the login; for required and verify_ca, MysqlConnection::Open
// refuses the session right after it (docs/engines/mysql.md, "TLS").
enum class MysqlTlsMode { kDisabled, kRequired, kVerifyCa, kVerifyIdentity };

// The mode as the URL spells it ("required", ...).
std::string_view TlsModeName(MysqlTlsMode mode);

struct MysqlTls {
  MysqlTlsMode mode = MysqlTlsMode::kDisabled;
  std::string ca;       // ssl_ca: PEM file of the trusted certificate authorities
  std::string ca_path;  // ssl_capath: a folder of them
  std::string cert;     // ssl_cert: the client's certificate, if the server asks for one
  std::string key;      // ssl_key: its private key
};

// Where and how to connect: parsed from mysql://user[:password]@host[:port]/database.
struct MysqlSettings {
  std::string host;
  int port = 3306;
  std::string user;
  std::string password;
  std::string database;
  // create_database=true: the engine creates `database` if it does not exist (CREATE
  // DATABASE IF NOT EXISTS) before its first session; the name must then be plain
  // ([A-Za-z0-9_]). Default: false (the database must exist).
  bool create_database = false;
  MysqlWaits waits;
  MysqlTls tls;

  std::string Describe() const;  // "user@host:port/database", never the password
};

// The query parameters the engine's URL accepts; anything else is refused by name.
const std::vector<std::string_view>& MysqlUrlParameters();

// Parses the engine's URL. Percent-escapes are decoded in the user, the password and
// the TLS file names. "localhost" is not special: the connection is always TCP.
// `waits` are the caller's; the URL's wait parameters override them. InvalidArgument
// for a malformed URL, an unknown parameter or TLS mode, a wait that is not positive
// and finite, waits out of order (account_lock_wait < statement_timeout <
// read_timeout), or a verifying TLS mode without ssl_ca or ssl_capath.
absl::StatusOr<MysqlSettings> ParseMysqlUrl(std::string_view url, const MysqlWaits& waits = {});

// A parameter of a prepared statement: NULL, a BIGINT, or a string (bytes as given).
using SqlValue = std::variant<std::monostate, int64_t, std::string>;
using SqlParams = std::vector<SqlValue>;

// The current row of a result, read by column number from 0. Only valid inside the
// row callback of MysqlConnection::Query (or Call).
class SqlRow {
 public:
  // `columns`: the result's column count, when the reader needs it (Call's result sets,
  // told apart by it); -1 otherwise.
  explicit SqlRow(const sql::ResultSet& result, int columns = -1)
      : result_(result), columns_(columns) {}

  std::string String(int column) const;
  std::optional<std::string> OptionalString(int column) const;
  int64_t Int64(int column) const;
  bool Bool(int column) const;
  bool IsNull(int column) const;
  int columns() const { return columns_; }

 private:
  const sql::ResultSet& result_;
  int columns_;
};

class MysqlConnection {
 public:
  // Connects and sets up the session. Unavailable when the server cannot be reached,
  // and when settings.tls asks for TLS and the session is not encrypted (checked before
  // any other statement; the session is closed).
  static absl::StatusOr<std::unique_ptr<MysqlConnection>> Open(const MysqlSettings& settings);
  ~MysqlConnection();
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  // Runs a prepared statement; returns the rows it matched (inserted, updated, deleted).
  absl::StatusOr<int64_t> Execute(std::string_view sql, const SqlParams& params,
                                  std::string_view what, ErrorContext context);

  // Runs a prepared query and calls `on_row` for each row, in order.
  absl::Status Query(std::string_view sql, const SqlParams& params,
                     const std::function<void(const SqlRow&)>& on_row, std::string_view what,
                     ErrorContext context);

  // Runs a prepared CALL of a stored procedure and calls `on_row` (if set) for each row
  // of the result sets it returns, in order. Its replies are read to the end, so the
  // session is ready for the next statement.
  absl::Status Call(std::string_view sql, const SqlParams& params,
                    const std::function<void(const SqlRow&)>& on_row, std::string_view what,
                    ErrorContext context);

  // Runs a statement over the text protocol, for what the prepared protocol does not
  // take or gains nothing from (SET, COMMIT, ROLLBACK, DDL). No parameters.
  absl::Status ExecuteText(std::string_view sql, std::string_view what, ErrorContext context);

  // Sets the session's innodb_lock_wait_timeout; no round trip when it already holds
  // `seconds`.
  absl::Status SetLockWaitSeconds(int seconds, std::string_view what, ErrorContext context);
  // What a procedure left the session's lock wait at (0: not known), so the next
  // SetLockWaitSeconds sends its SET only when needed.
  void AssumeLockWaitSeconds(int seconds) { lock_wait_seconds_ = seconds; }
  // The session's lock wait outside a claim (MysqlWaits::account_lock_wait), in seconds.
  int account_lock_wait_seconds() const { return account_lock_wait_seconds_; }

  // Lifts the server's statement timeout for the rest of the session (migrations: DDL
  // may take long). The client's read timeout still applies.
  absl::Status LiftStatementTimeout();

  absl::Status Commit(ErrorContext context);
  // Rolls back; a failure marks the connection broken (its state is then unknown).
  void Rollback();

  // Whether the server still answers (a ping). False marks the connection broken.
  bool Ping();

  // A unit of work's own statement (ledger/unit_of_work.h; mysql_caller_sql.cc): prepared
  // for this call only (the caller's text is not the engine's fixed set), `?` bound in
  // order, every column read as text.
  absl::StatusOr<SqlRows> RunCallerStatement(std::string_view sql, const SqlParams& params);
  // The driver's connection, for the caller's own driver code in a unit of work.
  sql::Connection& native() { return *connection_; }

  bool broken() const { return broken_; }
  // The error of the last call, none after one that succeeded: its number tells the
  // engine's own SIGNALled errors apart (mysql_errors.h), and it can be mapped again in
  // another phase once the outcome of a committing call is known.
  const std::optional<MysqlError>& last_error() const { return last_error_; }
  int last_error_code() const { return last_error_.has_value() ? last_error_->code : 0; }
  int64_t session_id() const { return session_id_; }  // CONNECTION_ID(), for KILL
  // Whether the server is a Galera node (MariaDB's @@wsrep_on): there a replicated
  // write set may abort this session's open transaction while it is idle (a brute-force
  // abort), and the abort's error is not always reported to the next statement
  // (MysqlStorageTransaction::VerifyClaimsHeld).
  bool galera() const { return galera_; }
  absl::Time last_used() const { return last_used_; }

 private:
  MysqlConnection(std::unique_ptr<sql::Connection> connection, const MysqlWaits& waits);
  absl::Status SetUpSession(const MysqlWaits& waits);
  // With a TLS mode, refuses the session unless the server reports it encrypted (its
  // Ssl_cipher): the client library may have gone on in plain text.
  absl::Status RequireEncryption(const MysqlSettings& settings);
  // Catches what `call` throws, marks the connection broken when needed, and maps.
  absl::Status Guard(const std::function<void()>& call, std::string_view what,
                     ErrorContext context);
  sql::PreparedStatement& Prepared(std::string_view sql);

  // Statements are destroyed before the connection they belong to (member order).
  std::unique_ptr<sql::Connection> connection_;
  std::map<std::string, std::unique_ptr<sql::PreparedStatement>, std::less<>> statements_;
  bool broken_ = false;
  std::optional<MysqlError> last_error_;
  int64_t session_id_ = 0;
  int lock_wait_seconds_ = 0;  // the session's value as last set; 0: unknown
  const int account_lock_wait_seconds_;
  bool mariadb_ = false;  // the server's flavour, from VERSION()
  bool galera_ = false;   // @@wsrep_on, read at set-up
  absl::Time last_used_;
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_H_
