// The caller's own SQL inside a unit of work (ledger/unit_of_work.h): the values a
// statement binds and the rows it returns, the same on every SQL engine.
//
//   absl::StatusOr<ledger::SqlRows> rows = work.Query(
//       "SELECT status FROM orders WHERE id = ?", {ledger::SqlValue("order-1001")});
//
// Placeholders are the engine's own (docs/unit-of-work.md): `?` on SQLite and MySQL,
// `$1`, `$2`, ... on PostgreSQL; UnitOfWork::Placeholder(n) writes the right one.
// Values are bound, never pasted into the text. Plain data; thread-compatible.
#ifndef LEDGER_LEDGER_CALLER_SQL_H_
#define LEDGER_LEDGER_CALLER_SQL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ledger {

// One bound parameter: NULL, an integer or text (bytes as given; numbers of any other
// type go as text and the database converts them).
using SqlValue = std::variant<std::nullptr_t, int64_t, std::string>;

// What a statement returned: its column names and every row, each column as text
// (integers in decimal) or nullopt for NULL; and the rows an INSERT, UPDATE or DELETE
// changed (0 for a SELECT).
struct SqlRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  int64_t changed_rows = 0;
};

// The most parameters one caller statement binds, and the most rows it may return (a
// unit of work reads what it is about to write, not reports).
inline constexpr size_t kCallerSqlParametersMax = 1000;
inline constexpr size_t kCallerSqlRowsMax = 10000;

}  // namespace ledger

#endif  // LEDGER_LEDGER_CALLER_SQL_H_
