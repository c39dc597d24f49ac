// A unit of work's own statements on SQLite (ledger/unit_of_work.h): prepared uncached
// (the caller's text is not the engine's fixed set), `?` placeholders bound in order,
// every column read as text. And SqliteHandleOf, the native handle.
#include <sqlite3.h>

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_engine.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "ledger/unit_of_work.h"

namespace ledger {
namespace sqlite_internal {
namespace {

constexpr std::string_view kWhat = "unit of work statement";

struct Finalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

// Whether `tail` holds nothing but blanks and semicolons.
bool NothingLeft(const char* tail) {
  for (; tail != nullptr && *tail != '\0'; ++tail) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(*tail)) && *tail != ';') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<SqlRows> RunCallerSqlOn(Connection& connection, std::string_view sql,
                                       const std::vector<SqlValue>& parameters) {
  sqlite3* database = connection.native();
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int result = sqlite3_prepare_v2(database, sql.data(), static_cast<int>(sql.size()), &raw, &tail);
  std::unique_ptr<sqlite3_stmt, Finalizer> statement(raw);
  if (result != SQLITE_OK) {
    if ((result & 0xff) == SQLITE_ERROR) {  // a syntax error, an unknown table or column
      return absl::InvalidArgumentError(absl::StrCat(
          "sqlite: the unit of work's statement does not prepare: ", sqlite3_errmsg(database)));
    }
    return connection.Fail(sqlite3_extended_errcode(database), kWhat, ErrorContext::kTransaction);
  }
  if (statement == nullptr) {
    return absl::InvalidArgumentError("sqlite: the unit of work's statement holds no SQL");
  }
  if (!NothingLeft(tail)) {
    return absl::InvalidArgumentError(
        "sqlite: a unit of work runs one statement per call; this text holds more");
  }
  const int expected = sqlite3_bind_parameter_count(statement.get());
  if (static_cast<size_t>(expected) != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat("sqlite: the statement has ", expected,
                                                   " placeholders but ", parameters.size(),
                                                   " parameters were given"));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const int position = static_cast<int>(i) + 1;
    const SqlValue& value = parameters[i];
    if (std::holds_alternative<std::nullptr_t>(value)) {
      result = sqlite3_bind_null(statement.get(), position);
    } else if (const int64_t* number = std::get_if<int64_t>(&value)) {
      result = sqlite3_bind_int64(statement.get(), position, *number);
    } else {
      const std::string& text = std::get<std::string>(value);
      result = sqlite3_bind_text(statement.get(), position, text.data(),
                                 static_cast<int>(text.size()), SQLITE_TRANSIENT);
    }
    if (result != SQLITE_OK) return connection.Fail(result, kWhat, ErrorContext::kTransaction);
  }
  SqlRows rows;
  const int columns = sqlite3_column_count(statement.get());
  for (int c = 0; c < columns; ++c) rows.columns.emplace_back(sqlite3_column_name(statement.get(), c));
  while (true) {
    result = sqlite3_step(statement.get());
    if (result == SQLITE_DONE) break;
    if (result != SQLITE_ROW) {
      return connection.Fail(sqlite3_extended_errcode(database), kWhat, ErrorContext::kTransaction);
    }
    if (rows.rows.size() == kCallerSqlRowsMax) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "sqlite: the unit of work's statement returns more than ", kCallerSqlRowsMax, " rows"));
    }
    std::vector<std::optional<std::string>>& row = rows.rows.emplace_back();
    for (int c = 0; c < columns; ++c) {
      if (sqlite3_column_type(statement.get(), c) == SQLITE_NULL) {
        row.emplace_back();
        continue;
      }
      const unsigned char* text = sqlite3_column_text(statement.get(), c);
      row.emplace_back(std::string(reinterpret_cast<const char*>(text),
                                   static_cast<size_t>(sqlite3_column_bytes(statement.get(), c))));
    }
  }
  if (!sqlite3_stmt_readonly(statement.get())) rows.changed_rows = sqlite3_changes(database);
  if (!connection.InTransaction()) return TransactionLostStatus("unit of work");
  return rows;
}

}  // namespace sqlite_internal

absl::StatusOr<sqlite3*> SqliteHandleOf(UnitOfWork& unit) {
  if (unit.engine_name() != "sqlite") {
    return absl::FailedPreconditionError(absl::StrCat(
        "SqliteHandleOf: the unit of work runs on ", std::string(unit.engine_name()),
        ", not sqlite"));
  }
  LEDGER_ASSIGN_OR_RETURN(void* handle, unit.NativeHandle());
  return static_cast<sqlite3*>(handle);
}

}  // namespace ledger
