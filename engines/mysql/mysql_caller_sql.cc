// A unit of work's own statements on MySQL / MariaDB (ledger/unit_of_work.h): prepared
// for the one call, `?` placeholders bound in order, every column read as text. And
// MysqlHandleOf, the native handle.
#include <cppconn/connection.h>
#include <cppconn/datatype.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine.h"
#include "ledger/unit_of_work.h"

namespace ledger {
namespace mysql_internal {

absl::StatusOr<SqlRows> MysqlConnection::RunCallerStatement(std::string_view sql,
                                                            const SqlParams& params) {
  SqlRows rows;
  bool too_many_rows = false;
  LEDGER_RETURN_IF_ERROR(Guard(
      [&] {
        std::unique_ptr<sql::PreparedStatement> statement(
            connection_->prepareStatement(sql::SQLString(sql.data(), sql.size())));
        for (size_t i = 0; i < params.size(); ++i) {
          const unsigned int index = static_cast<unsigned int>(i + 1);
          if (const int64_t* number = std::get_if<int64_t>(&params[i])) {
            statement->setInt64(index, *number);
          } else if (const std::string* text = std::get_if<std::string>(&params[i])) {
            statement->setString(index, sql::SQLString(*text));
          } else {
            statement->setNull(index, sql::DataType::VARCHAR);
          }
        }
        // The prepared statement says whether it returns rows (the driver's prepared
        // statements have no update count after a plain execute).
        if (statement->getMetaData()->getColumnCount() == 0) {
          rows.changed_rows = statement->executeUpdate();
          return;
        }
        std::unique_ptr<sql::ResultSet> result(statement->executeQuery());
        sql::ResultSetMetaData* metadata = result->getMetaData();
        const unsigned int columns = metadata->getColumnCount();
        for (unsigned int c = 1; c <= columns; ++c) {
          rows.columns.emplace_back(metadata->getColumnLabel(c).asStdString());
        }
        while (result->next()) {
          if (rows.rows.size() == kCallerSqlRowsMax) {
            too_many_rows = true;
            return;
          }
          std::vector<std::optional<std::string>>& row = rows.rows.emplace_back();
          for (unsigned int c = 1; c <= columns; ++c) {
            if (result->isNull(c)) {
              row.emplace_back();
            } else {
              row.emplace_back(result->getString(c).asStdString());
            }
          }
        }
      },
      "unit of work statement", ErrorContext::kTransaction));
  if (too_many_rows) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "mysql: the unit of work's statement returns more than ", kCallerSqlRowsMax, " rows"));
  }
  return rows;
}

}  // namespace mysql_internal

absl::StatusOr<sql::Connection*> MysqlHandleOf(UnitOfWork& unit) {
  if (unit.engine_name() != "mysql") {
    return absl::FailedPreconditionError(absl::StrCat("MysqlHandleOf: the unit of work runs on ",
                                                      std::string(unit.engine_name()),
                                                      ", not mysql"));
  }
  LEDGER_ASSIGN_OR_RETURN(void* handle, unit.NativeHandle());
  return static_cast<sql::Connection*>(handle);
}

}  // namespace ledger
