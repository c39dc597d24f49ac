// The MySQL engine's statements that are built per call (mysql_statements.h).
#include "engines/mysql/mysql_statements.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status.h"
#include "engines/common/waits.h"

namespace ledger::mysql_internal {
namespace {

// Named locks are server-wide, so the name carries the database; hashed, because MySQL
// 8 caps lock names at 64 characters and database names may be that long alone.
constexpr char kMigrationLockName[] = "CONCAT('ledger_migrate_', SHA1(DATABASE()))";

}  // namespace

std::string LockKeyRowsSql(std::string_view matches) {
  return absl::StrCat("SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS " FROM idempotency_keys WHERE ",
                      View(matches), " FOR UPDATE");
}

// One statement; InnoDB locks the rows as the primary-key range scan meets them, in
// ascending byte order, which is the sorted order of the ids. FORCE INDEX keeps the
// optimizer off a table scan, which would lock (wait for) unrelated rows.
std::string LockAccountsSql(size_t count) {
  // InnoDB locks the rows as the primary-key range scan meets them, in ascending byte
  // order, which is the sorted order of the ids. FORCE INDEX keeps the optimizer off a
  // table scan, which would lock (wait for) unrelated rows.
  return absl::StrCat("SELECT " LEDGER_MYSQL_ACCOUNT_COLUMNS ", entries_running_max"
                      " FROM accounts FORCE INDEX (PRIMARY) WHERE id IN (",
                      Placeholders(count), ") ORDER BY id FOR UPDATE");
}

std::string SelectHoldsSql(size_t count) {
  return absl::StrCat("SELECT " LEDGER_MYSQL_HOLD_COLUMNS " FROM holds WHERE id IN (",
                      Placeholders(count), ")");
}

std::string SelectTransactionsSql(size_t count) {
  return absl::StrCat("SELECT " LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS
                      " FROM transactions t" LEDGER_MYSQL_TRANSACTION_JOINS " WHERE t.id IN (",
                      Placeholders(count), ") ORDER BY t.id, e.entry_index");
}

std::string SettlementStateOfHoldsSql(size_t count) {
  return absl::StrCat("SELECT id, status, settled_by FROM holds WHERE id IN (",
                      Placeholders(count), ")");
}

// `state` goes last, once the guard no longer reads it.
std::string RecordKeysSql(std::string_view values) {
  constexpr char kReplaceable[] = "state = 'pending' OR expires_at <= VALUES(created_at)";
  return absl::StrCat(statement::kInsertKeysHead, View(values), " ON DUPLICATE KEY UPDATE",
                      " fingerprint = IF(", kReplaceable, ", VALUES(fingerprint), fingerprint),",
                      " transaction_id = IF(", kReplaceable,
                      ", VALUES(transaction_id), transaction_id),",
                      " created_at = IF(", kReplaceable, ", VALUES(created_at), created_at),",
                      " expires_at = IF(", kReplaceable, ", VALUES(expires_at), expires_at),",
                      " state = 'committed'");
}

std::string DropClaimedKeyRowsSql(std::string_view matches) {
  return absl::StrCat("DELETE FROM idempotency_keys WHERE ", View(matches));
}

std::string CountKeyRowsSql(std::string_view matches) {
  return absl::StrCat("SELECT COUNT(*) FROM idempotency_keys WHERE ", View(matches));
}

std::string SessionVariablesSql(int lock_wait_seconds, std::string_view statement_timeout) {
  return absl::StrCat("SET SESSION autocommit = 0, innodb_lock_wait_timeout = ",
                      lock_wait_seconds, ", ", View(statement_timeout),
                      ", sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'");
}

std::string SetSessionSql(std::string_view assignment) {
  return absl::StrCat("SET SESSION ", View(assignment));
}

std::string StatementTimeoutAssignment(bool mariadb, absl::Duration timeout) {
  const int64_t millis =
      timeout == absl::ZeroDuration() ? 0 : engine_common::WholeMillisecondsRoundedUp(timeout);
  // MariaDB: seconds with a fraction, every statement. MySQL 8: milliseconds, read-only
  // SELECTs only (it has no bound on other statements).
  if (mariadb) {
    return absl::StrCat("max_statement_time = ", millis / 1000, ".",
                        absl::Dec(millis % 1000, absl::kZeroPad3));
  }
  return absl::StrCat("max_execution_time = ", millis);
}

std::string LockWaitSql(int seconds) {
  return absl::StrCat("SET SESSION innodb_lock_wait_timeout = ", seconds);
}

std::string CreateDatabaseSql(std::string_view database) {
  return absl::StrCat("CREATE DATABASE IF NOT EXISTS `", View(database), "`");
}

std::string TakeMigrationLockSql() {
  return absl::StrCat("SELECT GET_LOCK(", kMigrationLockName, ", 0)");
}

std::string ReleaseMigrationLockSql() {
  return absl::StrCat("DO RELEASE_LOCK(", kMigrationLockName, ")");
}

}  // namespace ledger::mysql_internal
