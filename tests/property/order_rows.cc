#include "tests/property/order_rows.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "ledger/unit_of_work.h"
#include "tests/property/model.h"

namespace ledger::property {
namespace {

// Rows read per query (below kCallerSqlRowsMax).
constexpr int64_t kOrderRowsPageSize = 1000;

// The insert of the order row, in `unit`.
absl::Status InsertOrderRow(UnitOfWork& unit, const std::string& table,
                            const std::string& order_key, const std::string& transaction_id) {
  return unit
      .Execute(absl::StrCat("INSERT INTO ", table, " (order_key, transaction_id) VALUES (",
                            unit.Placeholder(1), ", ", unit.Placeholder(2), ")"),
               {order_key, transaction_id})
      .status();
}

}  // namespace

bool SentInUnitOfWork(const std::string& key) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : key) hash = (hash ^ c) * 1099511628211ull;
  return hash % 3 == 0;
}

std::string OrderKeyOf(const KeyIdentity& identity) {
  return IdentityText(IdentityOf(identity));
}

absl::Status CreateOrdersTable(Ledger& ledger, const std::string& table,
                               const std::vector<std::string>& setup) {
  std::vector<std::string> statements = setup;
  // The identity text is far below 255 bytes for the workloads' keys and scopes.
  statements.push_back(absl::StrCat("CREATE TABLE IF NOT EXISTS ", table,
                                    " (order_key VARCHAR(255) PRIMARY KEY,"
                                    " transaction_id VARCHAR(64) NOT NULL)"));
  statements.push_back(absl::StrCat("DELETE FROM ", table));
  for (const std::string& statement : statements) {
    // One unit each: MySQL commits DDL on its own anyway.
    LEDGER_RETURN_IF_ERROR(ledger.Transact(
        [&](UnitOfWork& unit) { return unit.Execute(statement).status(); }));
  }
  return absl::OkStatus();
}

SubmitResult SubmitInUnitOfWork(Ledger& ledger, const SubmitRequest& request,
                                const std::string& table, OrderRowWrite write) {
  const std::string order_key = OrderKeyOf(KeyIdentityOf(request));
  SubmitResult decided = absl::UnknownError("the unit's work did not run");
  absl::Status status = ledger.Transact([&](UnitOfWork& unit) -> absl::Status {
    decided = unit.Submit(request);
    if (!decided.ok()) return decided.status();
    // duplicate: the first post's unit wrote the row; rejected: no order, no row.
    if (table.empty() || decided->kind != OutcomeKind::kCommitted) return absl::OkStatus();
    if (write == OrderRowWrite::kApart) return absl::OkStatus();
    return InsertOrderRow(unit, table, order_key, decided->transaction.id);
  });
  if (status.ok() && write == OrderRowWrite::kApart && !table.empty() &&
      decided->kind == OutcomeKind::kCommitted) {
    // The broken service: the payment is acknowledged whatever becomes of its order row.
    absl::Status ignored = ledger.Transact([&](UnitOfWork& unit) {
      return InsertOrderRow(unit, table, order_key, decided->transaction.id);
    });
    (void)ignored;
  }
  if (status.ok()) return decided;
  const bool submit_error = !decided.ok() && decided.status() == status &&
                            (absl::IsInvalidArgument(status) || IsConflict(status) ||
                             IsInProgress(status) || IsDuplicate(status) ||
                             IsInvariantViolation(status));
  if (submit_error) return status;
  return Outcome::Faulted(status);
}

absl::StatusOr<std::map<std::string, std::string>> ReadOrderRows(Ledger& ledger,
                                                                 const std::string& table) {
  std::map<std::string, std::string> rows;
  std::string after;  // every order key sorts after ""
  while (true) {
    SqlRows page;
    LEDGER_RETURN_IF_ERROR(ledger.Transact([&](UnitOfWork& unit) -> absl::Status {
      LEDGER_ASSIGN_OR_RETURN(
          page, unit.Query(absl::StrCat("SELECT order_key, transaction_id FROM ", table,
                                        " WHERE order_key > ", unit.Placeholder(1),
                                        " ORDER BY order_key LIMIT ", kOrderRowsPageSize),
                           {after}));
      return absl::OkStatus();
    }));
    for (const std::vector<std::optional<std::string>>& row : page.rows) {
      if (row.size() != 2 || !row[0].has_value() || !row[1].has_value()) {
        return absl::InternalError(absl::StrCat("an order row of ", table, " reads as NULL"));
      }
      after = *row[0];
      rows[*row[0]] = *row[1];
    }
    if (static_cast<int64_t>(page.rows.size()) < kOrderRowsPageSize) return rows;
  }
}

std::string CheckOrderRows(const std::map<std::string, std::string>& order_rows,
                           const std::vector<KeyRecord>& keys,
                           const std::function<bool(const std::string&)>& sent_in_unit) {
  std::map<std::string, const KeyRecord*> by_order_key;
  for (const KeyRecord& record : keys) by_order_key[OrderKeyOf(record.identity)] = &record;
  for (const auto& [order_key, transaction_id] : order_rows) {
    auto record = by_order_key.find(order_key);
    if (record == by_order_key.end()) {
      return absl::StrCat("order row ", order_key, " (transaction ", transaction_id,
                          ") has no committed transaction under its key");
    }
    if (record->second->transaction_id != transaction_id) {
      return absl::StrCat("order row ", order_key, " names transaction ", transaction_id,
                          " but its key committed ", record->second->transaction_id);
    }
    if (!sent_in_unit(record->second->identity.key)) {
      return absl::StrCat("order row ", order_key, " for a key no unit of work sent");
    }
  }
  for (const auto& [order_key, record] : by_order_key) {
    if (sent_in_unit(record->identity.key) && order_rows.count(order_key) == 0) {
      return absl::StrCat("transaction ", record->transaction_id, " of key ", order_key,
                          " committed in a unit of work without its order row");
    }
  }
  return "";
}

}  // namespace ledger::property
