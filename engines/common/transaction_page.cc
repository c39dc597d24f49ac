#include "engines/common/transaction_page.h"

#include <map>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "ledger/ledger.h"
#include "nlohmann/json.hpp"

namespace ledger::engine_common {
namespace {

// Appends conditions with their parameters, numbering placeholders as it goes.
class Conditions {
 public:
  explicit Conditions(Placeholders placeholders) : placeholders_(placeholders) {}

  std::string Parameter(std::variant<std::string, int64_t> value) {
    parameters_.push_back(std::move(value));
    return placeholders_ == Placeholders::kNumbered ? absl::StrCat("$", parameters_.size())
                                                    : std::string("?");
  }
  void Add(std::string condition) {
    absl::StrAppend(&text_, text_.empty() ? " WHERE " : " AND ", condition);
  }
  const std::string& text() const { return text_; }
  // The conditions so far, which the next Add starts again from; the parameters stay.
  std::string TakeText() { return std::exchange(text_, std::string()); }
  std::vector<std::variant<std::string, int64_t>> TakeParameters() { return std::move(parameters_); }

 private:
  Placeholders placeholders_;
  std::string text_;
  std::vector<std::variant<std::string, int64_t>> parameters_;
};

// The cursor and the time range, on the driving index's (time, id) columns.
void AddRange(const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
              const std::string& time, const std::string& id, Conditions& where) {
  if (after.has_value()) {
    // Spelled out rather than a row value, so every engine's planner sees a range on time.
    const int64_t micros = absl::ToUnixMicros(after->created_at);
    std::string first = where.Parameter(micros);
    std::string second = where.Parameter(micros);
    std::string last_id = where.Parameter(after->id);
    where.Add(absl::StrCat(time, " >= ", first, " AND (", time, " > ", second, " OR ", id, " > ",
                           last_id, ")"));
  }
  if (filter.created_from.has_value()) {
    where.Add(absl::StrCat(time, " >= ",
                           where.Parameter(absl::ToUnixMicros(*filter.created_from))));
  }
  if (filter.created_before.has_value()) {
    where.Add(absl::StrCat(time, " < ",
                           where.Parameter(absl::ToUnixMicros(*filter.created_before))));
  }
}

// No filter but time: every kind's range of transactions_by_kind_time, each cut at the
// page's limit, merged. There is no index on (created_at, id) alone for a submit to keep
// (schema/sqlite/0006_fewer_reads_indexes.sql); a page reads at most
// kinds x limit index entries, a fixed bound however many transactions there are.
TransactionPageStatement MergeOfEveryKind(const TransactionFilter& filter,
                                          const std::optional<TransactionCursor>& after,
                                          int64_t limit, Placeholders placeholders) {
  Conditions where(placeholders);
  std::string sql;
  // Enumerators run from 0 without gaps, each named (ledger/transaction.cc).
  for (int value = 0;; ++value) {
    const std::string_view kind = OperationKindName(static_cast<OperationKind>(value));
    if (kind == "unknown") break;
    where.Add(absl::StrCat("driver.kind = ", where.Parameter(std::string(kind))));
    AddRange(filter, after, "driver.created_at", "driver.id", where);
    std::string conditions = where.TakeText();
    absl::StrAppend(&sql, value == 0 ? "" : " UNION ALL ",
                    "SELECT created_at, id FROM (SELECT driver.created_at, driver.id"
                    " FROM transactions AS driver", conditions,
                    " ORDER BY driver.created_at, driver.id LIMIT ", where.Parameter(limit),
                    ") AS kind_", value);
  }
  absl::StrAppend(&sql, " ORDER BY created_at, id LIMIT ", where.Parameter(limit));
  return {std::move(sql), where.TakeParameters()};
}

}  // namespace

TransactionPageStatement BuildTransactionPage(const TransactionFilter& filter,
                                              const std::optional<TransactionCursor>& after,
                                              int64_t limit, Placeholders placeholders) {
  LEDGER_CHECK(limit > 0) << "a page of transactions needs a positive limit, not " << limit;
  if (!filter.metadata_key.has_value() && filter.account_id.empty() && !filter.kind.has_value()) {
    return MergeOfEveryKind(filter, after, limit, placeholders);
  }
  Conditions where(placeholders);
  // The driving table: its (…, created_at, id) columns give the order and the range.
  std::string from;
  std::string time;
  std::string id;
  if (filter.metadata_key.has_value()) {
    from = "transaction_metadata AS driver";
    time = "driver.created_at";
    id = "driver.transaction_id";
    where.Add(absl::StrCat("driver.member_name = ", where.Parameter(*filter.metadata_key)));
    where.Add(absl::StrCat("driver.member_value = ", where.Parameter(filter.metadata_value)));
  } else if (!filter.account_id.empty()) {
    from = "entries AS driver";
    time = "driver.created_at";
    id = "driver.transaction_id";
    where.Add(absl::StrCat("driver.account_id = ", where.Parameter(filter.account_id)));
  } else {
    from = "transactions AS driver";
    time = "driver.created_at";
    id = "driver.id";
    if (filter.kind.has_value()) {
      where.Add(absl::StrCat("driver.kind = ",
                             where.Parameter(std::string(OperationKindName(*filter.kind)))));
    }
  }
  AddRange(filter, after, time, id, where);
  // Filters the driving index does not order by: checked on the rows it yields.
  if (filter.kind.has_value() && from != "transactions AS driver") {
    where.Add(absl::StrCat("EXISTS (SELECT 1 FROM transactions AS k WHERE k.id = ", id,
                           " AND k.kind = ",
                           where.Parameter(std::string(OperationKindName(*filter.kind))), ")"));
  }
  if (!filter.account_id.empty() && from == "transaction_metadata AS driver") {
    where.Add(absl::StrCat("EXISTS (SELECT 1 FROM entries AS e WHERE e.transaction_id = ", id,
                           " AND e.account_id = ", where.Parameter(filter.account_id), ")"));
  }
  // An account's transaction with two entries of the account appears once; the other
  // driving tables hold one row per transaction already.
  const bool by_entries = from == "entries AS driver";
  std::string sql = absl::StrCat("SELECT ", by_entries ? "DISTINCT " : "", time, ", ", id,
                                 " FROM ", from, where.text(),
                                 " ORDER BY ", time, ", ", id, " LIMIT ");
  absl::StrAppend(&sql, where.Parameter(limit));
  return {std::move(sql), where.TakeParameters()};
}

std::vector<MetadataMember> IndexedMetadataMembers(std::string_view metadata) {
  const nlohmann::json parsed =
      nlohmann::json::parse(metadata, nullptr, /*allow_exceptions=*/false);
  std::vector<MetadataMember> members;
  if (!parsed.is_object()) return members;
  for (auto member = parsed.begin(); member != parsed.end(); ++member) {
    if (!member->is_string()) continue;
    const std::string& name = member.key();
    const std::string& text = member->get_ref<const std::string&>();
    if (name.size() > kMetadataFilterNameBytesMax || text.size() > kMetadataFilterValueBytesMax) {
      continue;
    }
    members.push_back({name, text});
  }
  return members;
}

std::vector<Transaction> InPageOrder(const std::vector<std::string>& ids,
                                     std::vector<Transaction> transactions) {
  std::map<std::string, Transaction> by_id;
  for (Transaction& transaction : transactions) {
    std::string key = transaction.id;
    by_id.emplace(std::move(key), std::move(transaction));
  }
  std::vector<Transaction> ordered;
  ordered.reserve(ids.size());
  for (const std::string& id : ids) {
    auto it = by_id.find(id);
    if (it != by_id.end()) ordered.push_back(std::move(it->second));
  }
  return ordered;
}

}  // namespace ledger::engine_common
