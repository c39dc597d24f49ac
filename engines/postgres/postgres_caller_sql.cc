// A unit of work's own statements on PostgreSQL (ledger/unit_of_work.h): sent with
// exec_params, so the values travel apart from the text ($1, $2, ...), every column read
// as text. And PostgresHandleOf, the native handle.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "ledger/unit_of_work.h"
#include "pqxx/nontransaction"
#include "pqxx/result"

namespace ledger {
namespace postgres_internal {

SqlRows RunCallerSqlOn(pqxx::nontransaction& work, std::string_view sql,
                       const std::vector<SqlValue>& parameters) {
  // Text for every value, a null pointer for NULL: the server infers each type from
  // where its placeholder stands.
  std::vector<std::string> texts(parameters.size());
  std::vector<const char*> values(parameters.size(), nullptr);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (const int64_t* number = std::get_if<int64_t>(&parameters[i])) {
      texts[i] = absl::StrCat(*number);
    } else if (const std::string* text = std::get_if<std::string>(&parameters[i])) {
      texts[i] = *text;
    } else {
      continue;  // NULL
    }
    values[i] = texts[i].c_str();
  }
  const pqxx::result result =
      work.exec_params(std::string(sql), pqxx::prepare::make_dynamic_params(values));
  SqlRows rows;
  for (pqxx::row::size_type c = 0; c < result.columns(); ++c) {
    rows.columns.emplace_back(result.column_name(c));
  }
  if (result.size() > kCallerSqlRowsMax) {
    throw pqxx::usage_error(absl::StrCat("the unit of work's statement returns more than ",
                                         kCallerSqlRowsMax, " rows"));
  }
  for (const pqxx::row& row : result) {
    std::vector<std::optional<std::string>>& out = rows.rows.emplace_back();
    for (const pqxx::field& field : row) {
      if (field.is_null()) {
        out.emplace_back();
      } else {
        out.emplace_back(std::string(field.c_str(), field.size()));
      }
    }
  }
  rows.changed_rows = static_cast<int64_t>(result.affected_rows());
  return rows;
}

}  // namespace postgres_internal

absl::StatusOr<pqxx::nontransaction*> PostgresHandleOf(UnitOfWork& unit) {
  if (unit.engine_name() != "postgres") {
    return absl::FailedPreconditionError(absl::StrCat("PostgresHandleOf: the unit of work runs on ",
                                                      std::string(unit.engine_name()),
                                                      ", not postgres"));
  }
  LEDGER_ASSIGN_OR_RETURN(void* handle, unit.NativeHandle());
  return static_cast<pqxx::nontransaction*>(handle);
}

}  // namespace ledger
