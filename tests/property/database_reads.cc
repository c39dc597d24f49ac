#include "tests/property/database_reads.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "ledger/verify.h"

namespace ledger::property {
namespace {

constexpr int64_t kPageSize = 500;

}  // namespace

absl::StatusOr<std::vector<Account>> ReadAllAccounts(Engine& engine) {
  std::vector<Account> all;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> page, engine.ListAccounts(after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().id;
  }
}

absl::StatusOr<std::vector<Transaction>> ReadAllTransactions(Engine& engine) {
  std::vector<Transaction> all;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> page,
                            engine.ListTransactions(after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().id;
  }
}

absl::StatusOr<std::vector<KeyRecord>> ReadAllKeyRecords(Engine& engine) {
  std::vector<KeyRecord> all;
  std::optional<KeyIdentity> after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<KeyRecord> page, engine.ListKeyRecords(after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().identity;
  }
}

absl::StatusOr<std::vector<OutboxEvent>> ReadAllEvents(Engine& engine) {
  std::vector<OutboxEvent> all;
  int64_t after = 0;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<OutboxEvent> page, engine.ListEvents(after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().sequence;
  }
}

absl::StatusOr<std::vector<Hold>> ReadAllHolds(Engine& engine) {
  std::vector<Hold> all;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> page, engine.ListHolds("", after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().id;
  }
}

absl::StatusOr<std::vector<Account>> ReadAllAccountsNow(Ledger& ledger) {
  std::vector<Account> all;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> page, ledger.ListAccounts(after, kPageSize));
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kPageSize) return all;
    after = page.back().id;
  }
}

absl::StatusOr<std::optional<KeyRecord>> FindKeyRecord(Engine& engine,
                                                       const KeyIdentity& identity) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<KeyRecord> keys, ReadAllKeyRecords(engine));
  for (KeyRecord& record : keys) {
    if (record.identity == identity) return std::move(record);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<Account>> OpenUniverse(Ledger& ledger, const Universe& universe) {
  for (const Asset& asset : universe.assets) {
    LEDGER_RETURN_IF_ERROR(Annotate(ledger.DefineAsset(asset), "define asset"));
  }
  std::vector<Account> opened;
  for (const AccountSpec& spec : universe.accounts) {
    LEDGER_ASSIGN_OR_RETURN(Account account, ledger.OpenAccount(spec));
    opened.push_back(std::move(account));
  }
  for (const std::string& id : universe.closed_at_setup) {
    LEDGER_RETURN_IF_ERROR(Annotate(ledger.CloseAccount(id), "close"));
  }
  return opened;
}

std::string CheckConservationAndSolvency(const std::vector<Account>& accounts) {
  std::map<std::string, Amount> totals;
  for (const Account& account : accounts) {
    totals[account.asset] += account.balance;
    if (account.balance < account.BalanceFloor()) {
      return absl::StrCat("account ", account.id, " has balance ", account.balance,
                          ", below its floor ", account.BalanceFloor());
    }
  }
  for (const auto& [asset, total] : totals) {
    if (total != 0) return absl::StrCat(asset, " balances sum to ", total, ", not 0");
  }
  return "";
}

std::string CheckOneTransactionPerKey(const std::vector<Transaction>& transactions,
                                      const std::vector<KeyRecord>& keys,
                                      const std::vector<OutboxEvent>& events) {
  std::map<std::string, int> named;  // transaction id -> key records naming it
  for (const KeyRecord& record : keys) named[record.transaction_id] += 1;
  std::set<std::string> ids;
  for (const Transaction& transaction : transactions) {
    ids.insert(transaction.id);
    auto it = named.find(transaction.id);
    if (transaction.kind == OperationKind::kExpire) {
      if (it == named.end()) continue;
      return absl::StrCat("expire transaction ", transaction.id, " is named by a key record");
    }
    if (it == named.end()) {
      return absl::StrCat("transaction ", transaction.id, " is named by no key record: posted",
                          " without its key (the claim or the record was skipped)");
    }
    if (it->second > 1) {
      return absl::StrCat("transaction ", transaction.id, " is named by ", it->second,
                          " key records");
    }
  }
  for (const auto& [id, count] : named) {
    if (ids.count(id) == 0) return absl::StrCat("a key record names missing transaction ", id);
  }
  std::map<std::string, int> events_per_transaction;
  for (const OutboxEvent& event : events) events_per_transaction[event.transaction_id] += 1;
  if (events_per_transaction.size() != ids.size() || events.size() != ids.size()) {
    return absl::StrCat(events.size(), " outbox events for ", ids.size(), " transactions");
  }
  for (const auto& [id, count] : events_per_transaction) {
    if (ids.count(id) == 0) return absl::StrCat("an outbox event names missing transaction ", id);
  }
  return "";
}

std::string RunVerify(Engine& engine) {
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine);
  if (!report.ok()) return absl::StrCat("verify could not run: ", report.status().ToString());
  if (report->ok()) return "";
  return absl::StrCat("verify found ", report->violation_count,
                      " violations: ", absl::StrJoin(report->violations, "; "));
}

}  // namespace ledger::property
