#include "engines/sqlite/sqlite_connection.h"

#include <sqlite3.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/check.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {
namespace {

// Connections are handed from thread to thread by the pool (whose mutex orders the
// hand-over) and never used by two threads at once, so SQLite's per-connection mutex
// is pure overhead: multi-thread mode, not serialized.
constexpr int kOpenFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;

int ToBusyMilliseconds(absl::Duration timeout) {
  if (timeout <= absl::ZeroDuration()) return 0;
  const int64_t milliseconds = absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1)));
  return milliseconds > INT_MAX ? INT_MAX : static_cast<int>(milliseconds);
}

bool IsSynchronousSetting(std::string_view value) {
  return value == "OFF" || value == "NORMAL" || value == "FULL" || value == "EXTRA";
}

}  // namespace

// ---- Query ----

Query::Query(Connection* connection, sqlite3_stmt* statement, bool* in_use,
             std::string_view what, ErrorContext context)
    : connection_(connection), statement_(statement), in_use_(in_use), what_(what),
      context_(context) {
  LEDGER_CHECK(!*in_use_) << "one statement at a time on a connection";
  *in_use_ = true;
}

Query::Query(Query&& other) noexcept
    : connection_(other.connection_),
      statement_(std::exchange(other.statement_, nullptr)),
      in_use_(other.in_use_),
      what_(other.what_),
      context_(other.context_),
      next_parameter_(other.next_parameter_),
      bind_error_(other.bind_error_) {}

Query::~Query() {
  if (statement_ == nullptr) return;
  // Reset ends the statement's implicit read transaction; its result code repeats the
  // last step's error, which was already reported.
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  *in_use_ = false;
}

void Query::NoteBindResult(int result) {
  if (result != SQLITE_OK && bind_error_ == 0) bind_error_ = result;
  ++next_parameter_;
}

Query& Query::BindInt(int64_t value) {
  NoteBindResult(sqlite3_bind_int64(statement_, next_parameter_, value));
  return *this;
}

Query& Query::BindText(std::string_view value) {
  // SQLITE_TRANSIENT copies: callers pass temporaries (Scope::Encoded()).
  NoteBindResult(sqlite3_bind_text64(statement_, next_parameter_, value.data(), value.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Query& Query::BindOptionalText(const std::optional<std::string>& value) {
  if (value.has_value()) return BindText(*value);
  NoteBindResult(sqlite3_bind_null(statement_, next_parameter_));
  return *this;
}

Query& Query::BindTime(absl::Time value) { return BindInt(absl::ToUnixMicros(value)); }

Query& Query::BindOptionalTime(const std::optional<absl::Time>& value) {
  if (value.has_value()) return BindTime(*value);
  NoteBindResult(sqlite3_bind_null(statement_, next_parameter_));
  return *this;
}

absl::StatusOr<bool> Query::Step() {
  if (bind_error_ != 0) return connection_->Fail(bind_error_, what_, context_);
  const int result = sqlite3_step(statement_);
  if (result == SQLITE_ROW) return true;
  if (result == SQLITE_DONE) return false;
  return connection_->Fail(result, what_, context_);
}

absl::Status Query::Run() {
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool has_row, Step());
    if (!has_row) return absl::OkStatus();
  }
}

int64_t Query::Int(int column) const { return sqlite3_column_int64(statement_, column); }

std::string Query::Text(int column) const {
  // Byte-exact: column_text then column_bytes, never strlen (no embedded-NUL surprises).
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (text == nullptr) return std::string();
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

std::optional<std::string> Query::OptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Text(column);
}

absl::Time Query::Time(int column) const { return absl::FromUnixMicros(Int(column)); }

bool Query::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

// ---- Connection ----

void Connection::DatabaseCloser::operator()(sqlite3* database) const {
  // close_v2 never fails on open statements: it defers the close until they finish.
  sqlite3_close_v2(database);
}

void Connection::StatementFinalizer::operator()(sqlite3_stmt* statement) const {
  sqlite3_finalize(statement);
}

Connection::Connection(std::unique_ptr<sqlite3, DatabaseCloser> database,
                       ConnectionSettings settings)
    : database_(std::move(database)), settings_(std::move(settings)) {}

Connection::~Connection() {
  statements_.clear();  // finalize before the database closes (also the declared order)
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const ConnectionSettings& settings) {
  sqlite3* raw = nullptr;
  const int flags = kOpenFlags | (settings.create_if_missing ? SQLITE_OPEN_CREATE : 0);
  const int result = sqlite3_open_v2(settings.path.c_str(), &raw, flags, nullptr);
  // Even a failed open may allocate a handle that must be closed.
  std::unique_ptr<sqlite3, DatabaseCloser> database(raw);
  if (result != SQLITE_OK) {
    const char* message = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(result);
    if (!settings.create_if_missing && (result & 0xff) == SQLITE_CANTOPEN &&
        !std::filesystem::exists(settings.path)) {
      message = "the database file does not exist";
    }
    return Annotate(SqliteErrorStatus(result, message, "open database", ErrorContext::kConnect),
                    settings.path);
  }
  std::unique_ptr<Connection> connection(new Connection(std::move(database), settings));
  LEDGER_RETURN_IF_ERROR(Annotate(connection->ApplySettings(), settings.path));
  return connection;
}

absl::Status Connection::ApplySettings() {
  sqlite3_extended_result_codes(database_.get(), 1);
  // The busy timeout first: switching to WAL needs a lock another process may hold.
  RestoreDefaultBusyTimeout();
  if (!IsSynchronousSetting(settings_.synchronous)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sqlite: synchronous must be OFF, NORMAL, FULL or EXTRA, not \"", settings_.synchronous,
        "\""));
  }
  LEDGER_RETURN_IF_ERROR(Execute(statement::kEnableForeignKeys, "enable foreign keys",
                                 ErrorContext::kConnect));
  LEDGER_RETURN_IF_ERROR(EnableWriteAheadLog());
  // The page cache and the memory map (SqliteOptions::cache_size_kib, mmap_size_mib): a
  // group-committed batch of the single writer touches more pages than SQLite's default
  // 2,000 KiB cache holds and would spill them into the WAL before its commit; the map (opt-in)
  // reads the file's pages without pread (docs/benchmarks.md). SQLite maps the file
  // read-only; writes still go through the WAL.
  LEDGER_RETURN_IF_ERROR(Execute(absl::StrCat(statement::kSetCacheSizeHead, settings_.cache_size_kib),
                                 "set cache_size", ErrorContext::kConnect));
  LEDGER_RETURN_IF_ERROR(Execute(
      absl::StrCat(statement::kSetMmapSizeHead, settings_.mmap_size_mib * int64_t{1024 * 1024}),
      "set mmap_size", ErrorContext::kConnect));
  return Execute(absl::StrCat(statement::kSetSynchronousHead, settings_.synchronous),
                 "set synchronous", ErrorContext::kConnect);
}

absl::Status Connection::EnableWriteAheadLog() {
  // Switching a new file to WAL needs its exclusive lock, and SQLite answers BUSY at
  // once, without the busy handler, when another connection is switching it at the
  // same time (two processes creating one database). So retry here, up to the busy
  // timeout, with a short growing pause.
  const absl::Time deadline = absl::Now() + settings_.busy_timeout;
  absl::Duration pause = absl::Milliseconds(1);
  while (true) {
    absl::StatusOr<std::string> mode = SetJournalModeToWal();
    if (mode.ok() || !IsRetryable(mode.status()) || absl::Now() + pause > deadline) {
      LEDGER_RETURN_IF_ERROR(mode.status());
      if (*mode == "wal") return absl::OkStatus();
      // A :memory: or temp database, or a VFS without shared memory, cannot run WAL;
      // the engine's concurrency (readers beside one writer) depends on it.
      return absl::FailedPreconditionError(absl::StrCat(
          "sqlite: the database refused WAL mode (journal_mode is \"", *mode, "\")"));
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(50));
  }
}

absl::StatusOr<std::string> Connection::SetJournalModeToWal() {
  LEDGER_ASSIGN_OR_RETURN(Query query, Prepare(statement::kEnableWriteAheadLog, "enable WAL",
                                               ErrorContext::kConnect));
  LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
  return has_row ? absl::AsciiStrToLower(query.Text(0)) : std::string();
}

absl::StatusOr<Query> Connection::Prepare(std::string_view sql, std::string_view what,
                                          ErrorContext context) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    const int result = sqlite3_prepare_v3(database_.get(), sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    std::unique_ptr<sqlite3_stmt, StatementFinalizer> statement(raw);
    if (result != SQLITE_OK) return Fail(result, what, context);
    if (statement == nullptr) {
      return absl::InternalError(absl::StrCat("sqlite: ", std::string(what), ": empty statement"));
    }
    found = statements_.emplace(std::string(sql), CachedStatement{std::move(statement)}).first;
  }
  if (found->second.in_use) {
    // Two live uses of one statement would reset each other: a programming error.
    return absl::InternalError(absl::StrCat("sqlite: ", std::string(what), ": statement already in use"));
  }
  return Query(this, found->second.statement.get(), &found->second.in_use, what, context);
}

absl::Status Connection::Execute(const std::string& sql, std::string_view what,
                                 ErrorContext context) {
  const int result = sqlite3_exec(database_.get(), sql.c_str(), nullptr, nullptr, nullptr);
  if (result != SQLITE_OK) return Fail(result, what, context);
  return absl::OkStatus();
}

void Connection::SetBusyTimeout(absl::Duration timeout) {
  sqlite3_busy_timeout(database_.get(), ToBusyMilliseconds(timeout));
}

bool Connection::InTransaction() const { return sqlite3_get_autocommit(database_.get()) == 0; }

int64_t Connection::ChangedRows() const { return sqlite3_changes64(database_.get()); }

absl::Status Connection::Fail(int result, std::string_view what, ErrorContext context) {
  if (IsConnectionBroken(result)) broken_ = true;
  return SqliteErrorStatus(result, sqlite3_errmsg(database_.get()), what, context);
}

}  // namespace ledger::sqlite_internal
