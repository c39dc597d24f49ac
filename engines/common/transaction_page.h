// The SQL of one page of Engine::FindTransactions, once for every SQL engine: the
// statement selects the (created_at, id) of the page's transactions in that order, through
// the index of the narrowest filter given (docs/api.md, "Listing transactions"):
//
//   metadata member -> transaction_metadata's primary key (name, value, created_at, id)
//   account         -> entries_by_account_transaction (account_id, created_at, transaction_id)
//   kind            -> transactions_by_kind_time (kind, created_at, id)
//   otherwise       -> the same index, every kind's range cut at the page's limit and
//                      merged: at most kinds x limit entries read (no index on
//                      (created_at, id) alone for every submit to keep)
//
// The time range and the cursor narrow that index's range; the other filters are checked
// on the rows it yields. Each engine runs the statement with its driver, binding the
// parameters in order, then loads the transactions with its GetTransactions.
// IndexedMetadataMembers says which rows of transaction_metadata a transaction has: every
// SQL engine's write path inserts them (PostgreSQL skips metadata naming \u0000, which
// its text cannot hold).
//
// Internal to engines/. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_
#define LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

// One row of transaction_metadata: a top-level member of a transaction's metadata.
struct MetadataMember {
  std::string name;
  std::string value;
  friend bool operator==(const MetadataMember&, const MetadataMember&) = default;
};

// The members of `metadata` (a transaction's metadata text) that the metadata index
// holds: each top-level member whose value is a JSON string, its name at most
// kMetadataFilterNameBytesMax bytes and its value at most kMetadataFilterValueBytesMax
// (ledger/ledger.h: what a filter may name), in name order. Text that is not a JSON
// object has none. The same reading as TransactionMatches (ledger/engine.h), so a filter
// finds through the index exactly the transactions the memory engine finds.
std::vector<MetadataMember> IndexedMetadataMembers(std::string_view metadata);

// `transactions` (any order) ordered as `ids` lists them; ids without one are skipped.
std::vector<Transaction> InPageOrder(const std::vector<std::string>& ids,
                                     std::vector<Transaction> transactions);

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_TRANSACTION_PAGE_H_
