// RAII over the SQLite C API: a Connection owns one sqlite3* and its prepared
// statements (prepared on first use, cached for the connection's life); a Query is one
// use of a cached statement, reset when it goes out of scope so no statement keeps a
// read snapshot open by accident.
//
//   LEDGER_ASSIGN_OR_RETURN(Query query,
//                           connection.Prepare("SELECT scale FROM assets WHERE code = ?",
//                                              "read asset"));
//   query.BindText(code);
//   LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
//
// Every failure goes through sqlite_errors.h; a code that means the connection is
// unusable marks it broken, and the pool then closes it instead of reusing it.
//
// Internal to engines/sqlite. Not thread-safe: a Connection (and its Queries) is used
// by one thread at a time, which the pool guarantees; connections are opened with
// SQLITE_OPEN_NOMUTEX for that reason.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/sqlite/sqlite_errors.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ledger::sqlite_internal {

struct ConnectionSettings {
  std::string path;
  absl::Duration busy_timeout = absl::Seconds(10);  // the default wait for the lock
  std::string synchronous = "FULL";                 // OFF, NORMAL, FULL or EXTRA
  bool create_if_missing = true;                    // SQLITE_OPEN_CREATE
  int64_t cache_size_kib = 65536;                   // PRAGMA cache_size, in KiB
  int64_t mmap_size_mib = 0;                        // PRAGMA mmap_size, in MiB; 0: off
};

class Connection;

class Query {
 public:
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();

  // Bind the next parameter (1, 2, ...). A bind error is reported by the next Step.
  Query& BindInt(int64_t value);
  Query& BindText(std::string_view value);
  Query& BindOptionalText(const std::optional<std::string>& value);
  Query& BindTime(absl::Time value);  // integer microseconds since the epoch
  Query& BindOptionalTime(const std::optional<absl::Time>& value);  // nullopt: NULL

  // True when a row is ready to read, false when the statement is done.
  absl::StatusOr<bool> Step();
  // Steps a statement that returns no rows to its end.
  absl::Status Run();

  int64_t Int(int column) const;
  std::string Text(int column) const;
  std::optional<std::string> OptionalText(int column) const;
  absl::Time Time(int column) const;
  bool IsNull(int column) const;

 private:
  friend class Connection;
  Query(Connection* connection, sqlite3_stmt* statement, bool* in_use, std::string_view what,
        ErrorContext context);
  void NoteBindResult(int result);

  Connection* connection_;
  sqlite3_stmt* statement_;  // owned by the connection's cache; null once moved from
  bool* in_use_;             // the cache entry's flag, cleared when this use ends
  std::string_view what_;    // a literal naming the statement, for error messages
  ErrorContext context_;
  int next_parameter_ = 1;
  int bind_error_ = 0;  // the first failed bind's result code
};

class Connection {
 public:
  // Opens (creating if missing) the database file and applies the per-connection
  // settings: extended result codes, busy timeout, foreign_keys=ON, journal_mode=WAL,
  // synchronous.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const ConnectionSettings& settings);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // `what` must outlive the Query (use a literal). Errors map with `context`.
  absl::StatusOr<Query> Prepare(std::string_view sql, std::string_view what,
                                ErrorContext context = ErrorContext::kStandalone);
  // Runs SQL that returns no rows; may hold several statements (migrations).
  absl::Status Execute(const std::string& sql, std::string_view what, ErrorContext context);

  // The busy handler's bound; a zero duration makes a locked database fail at once.
  void SetBusyTimeout(absl::Duration timeout);
  void RestoreDefaultBusyTimeout() { SetBusyTimeout(settings_.busy_timeout); }

  // Whether an explicit transaction is open (SQLite rolls back on its own after some
  // errors: this is how that is noticed).
  bool InTransaction() const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t ChangedRows() const;

  // The handle itself, for a unit of work's own statements (sqlite_caller_sql.cc).
  sqlite3* native() const { return database_.get(); }

  bool broken() const { return broken_; }
  void MarkBroken() { broken_ = true; }

  // Maps a failing result code (with the connection's error message) and marks the
  // connection broken when the code says it is unusable.
  absl::Status Fail(int result, std::string_view what, ErrorContext context);

 private:
  struct DatabaseCloser {
    void operator()(sqlite3* database) const;
  };
  struct StatementFinalizer {
    void operator()(sqlite3_stmt* statement) const;
  };
  struct CachedStatement {
    std::unique_ptr<sqlite3_stmt, StatementFinalizer> statement;
    bool in_use = false;
  };
  friend class Query;

  Connection(std::unique_ptr<sqlite3, DatabaseCloser> database, ConnectionSettings settings);
  absl::Status ApplySettings();
  absl::Status EnableWriteAheadLog();
  // The mode SQLite reports after the PRAGMA, lower-case.
  absl::StatusOr<std::string> SetJournalModeToWal();

  // Declared first so it is destroyed last, after every statement is finalized.
  std::unique_ptr<sqlite3, DatabaseCloser> database_;
  ConnectionSettings settings_;
  std::map<std::string, CachedStatement, std::less<>> statements_;
  bool broken_ = false;
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_H_
