// The SQL of one page of Engine::FindTransactions, once for every SQL engine: the
// statement selects the (created_at, id) of the page's transactions in that order, through
// the index of the narrowest filter given (docs/api.md, "Listing transactions"):
//
//   metadata member -> transaction_metadata's primary key (name, value, created_at, id)
//   account         -> entries_by_account_transaction (account_id, created_at, transaction_id)
//   kind            -> transactions_by_kind_time (kind, created_at, id)
//   otherwise       -> transactions_by_time (created_at, id)
//
// The time range and the cursor narrow that index's range; the other filters are checked
// on the rows it yields. Each engine runs the statement with its driver, binding the
// parameters in order, then loads the transactions with its GetTransactions.
//
// Internal to engines/. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_
#define LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ledger/engine.h"

namespace ledger::engine_common {

enum class Placeholders {
  kQuestionMarks,  // SQLite, MySQL: ?
  kNumbered,       // PostgreSQL: $1, $2, ...
};

struct TransactionPageStatement {
  std::string sql;
  // In placeholder order: text, or integers (times as microseconds since the epoch).
  std::vector<std::variant<std::string, int64_t>> parameters;
};

// `limit` > 0.
TransactionPageStatement BuildTransactionPage(const TransactionFilter& filter,
                                              const std::optional<TransactionCursor>& after,
                                              int64_t limit, Placeholders placeholders);

// `transactions` (any order) ordered as `ids` lists them; ids without one are skipped.
std::vector<Transaction> InPageOrder(const std::vector<std::string>& ids,
                                     std::vector<Transaction> transactions);

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_
