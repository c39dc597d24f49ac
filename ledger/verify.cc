#include "ledger/verify.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"

namespace ledger {
namespace {

constexpr int64_t kPageSize = 500;

class Auditor {
 public:
  explicit Auditor(Engine& engine) : engine_(engine) {}

  absl::StatusOr<VerifyReport> Run() {
    LEDGER_RETURN_IF_ERROR(AuditTransactions());
    LEDGER_RETURN_IF_ERROR(AuditHolds());
    LEDGER_RETURN_IF_ERROR(AuditAccounts());
    AuditConservation();
    LEDGER_RETURN_IF_ERROR(AuditKeys());
    return std::move(report_);
  }

 private:
  void Violation(std::string text) {
    report_.violation_count += 1;
    if (report_.violations.size() < kVerifyViolationsMax) report_.violations.push_back(std::move(text));
  }

  absl::Status AuditTransactions() {
    std::string after;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> page, engine_.ListTransactions(after, kPageSize));
      for (const Transaction& transaction : page) {
        LEDGER_RETURN_IF_ERROR(AuditTransaction(transaction));
      }
      if (static_cast<int64_t>(page.size()) < kPageSize) return absl::OkStatus();
      after = page.back().id;
    }
  }

  absl::Status AuditTransaction(const Transaction& transaction) {
    report_.transactions += 1;
    LEDGER_RETURN_IF_ERROR(AuditHoldReference(transaction));
    std::map<std::string, Amount> sum_by_asset;
    for (const Entry& entry : transaction.entries) {
      std::optional<Amount> sum = CheckedAdd(sum_by_asset[entry.asset], entry.amount);
      if (!sum.has_value()) {
        Violation(absl::StrCat("transaction ", transaction.id, ": ", entry.asset, " sum overflows"));
        return absl::OkStatus();
      }
      sum_by_asset[entry.asset] = *sum;
    }
    for (const auto& [asset, sum] : sum_by_asset) {
      if (sum != 0) {
        Violation(absl::StrCat("transaction ", transaction.id, " does not balance: ", asset,
                               " entries sum to ", sum));
      }
    }
    bool posts = transaction.kind != OperationKind::kHold && transaction.kind != OperationKind::kVoid &&
                 transaction.kind != OperationKind::kExpire;
    if (posts == transaction.entries.empty()) {
      Violation(absl::StrCat("transaction ", transaction.id, " (", View(OperationKindName(transaction.kind)),
                             ") has ", transaction.entries.size(), " entries"));
    }
    return absl::OkStatus();
  }

  // A hold carries its terms; a capture, void or expire names the hold, which names it
  // back as its settlement with the status of its kind.
  absl::Status AuditHoldReference(const Transaction& transaction) {
    bool is_hold = transaction.kind == OperationKind::kHold;
    bool settles = transaction.kind == OperationKind::kCapture ||
                   transaction.kind == OperationKind::kVoid || transaction.kind == OperationKind::kExpire;
    if (is_hold != transaction.hold.has_value() || settles != transaction.hold_id.has_value()) {
      Violation(absl::StrCat("transaction ", transaction.id, " (", View(OperationKindName(transaction.kind)),
                             ") has hold terms or a hold_id its kind does not take, or lacks them"));
      return absl::OkStatus();
    }
    if (!settles) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(std::optional<Hold> hold, engine_.GetHold(*transaction.hold_id));
    if (!hold.has_value()) {
      Violation(absl::StrCat("transaction ", transaction.id, " settles missing hold ", *transaction.hold_id));
      return absl::OkStatus();
    }
    if (hold->settled_by != transaction.id || hold->status != SettledStatusOf(transaction.kind)) {
      Violation(absl::StrCat("hold ", hold->id, " is ", View(HoldStatusName(hold->status)), " by ",
                             hold->settled_by.value_or("nothing"), ", but transaction ", transaction.id,
                             " ", View(OperationKindName(transaction.kind)), "s it"));
    }
    if (transaction.kind == OperationKind::kCapture) AuditCapture(transaction, *hold);
    return absl::OkStatus();
  }

  static HoldStatus SettledStatusOf(OperationKind kind) {
    if (kind == OperationKind::kCapture) return HoldStatus::kCaptured;
    return kind == OperationKind::kVoid ? HoldStatus::kVoided : HoldStatus::kExpired;
  }

  void AuditCapture(const Transaction& capture, const Hold& hold) {
    bool shaped = capture.entries.size() == 2 && capture.entries[0].account_id == hold.terms.from &&
                  capture.entries[1].account_id == hold.terms.to &&
                  capture.entries[0].asset == hold.terms.asset &&
                  capture.entries[1].amount > 0 && capture.entries[1].amount <= hold.terms.amount;
    if (!shaped) {
      Violation(absl::StrCat("capture ", capture.id, " does not move at most ", hold.terms.amount,
                             " ", hold.terms.asset, " from ", hold.terms.from, " to ", hold.terms.to));
    }
  }

  absl::Status AuditHolds() {
    std::string after;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> page, engine_.ListHolds("", after, kPageSize));
      for (const Hold& hold : page) {
        report_.holds += 1;
        if (hold.terms.amount <= 0) Violation(absl::StrCat("hold ", hold.id, " holds ", hold.terms.amount));
        if ((hold.status == HoldStatus::kPending) == hold.settled_by.has_value()) {
          Violation(absl::StrCat("hold ", hold.id, " is ", View(HoldStatusName(hold.status)), " by ",
                                 hold.settled_by.value_or("nothing")));
        }
      }
      if (static_cast<int64_t>(page.size()) < kPageSize) return absl::OkStatus();
      after = page.back().id;
    }
  }

  // The account's stored pending amounts against the holds recorded pending.
  absl::Status AuditPending(const Account& account) {
    Amount debits = 0;
    Amount credits = 0;
    std::string after;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> page, engine_.ListHolds(account.id, after, kPageSize));
      for (const Hold& hold : page) {
        if (hold.status != HoldStatus::kPending) continue;
        if (hold.terms.from == account.id) debits = CheckedAdd(debits, hold.terms.amount).value_or(-1);
        if (hold.terms.to == account.id) credits = CheckedAdd(credits, hold.terms.amount).value_or(-1);
      }
      if (static_cast<int64_t>(page.size()) < kPageSize) break;
      after = page.back().id;
    }
    if (account.pending_debits != debits || account.pending_credits != credits) {
      Violation(absl::StrCat("account ", account.id, ": pending debits ", account.pending_debits,
                             " and credits ", account.pending_credits, " but its pending holds sum to ",
                             debits, " and ", credits));
    }
    return absl::OkStatus();
  }

  absl::Status AuditAccounts() {
    std::string after;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<Account> page, engine_.ListAccounts(after, kPageSize));
      for (const Account& account : page) LEDGER_RETURN_IF_ERROR(AuditAccount(account));
      if (static_cast<int64_t>(page.size()) < kPageSize) return absl::OkStatus();
      after = page.back().id;
    }
  }

  absl::Status AuditAccount(const Account& account) {
    report_.accounts += 1;
    LEDGER_RETURN_IF_ERROR(AuditPending(account));
    Amount sum = 0;
    int64_t version = 0;
    Amount last_balance_after = 0;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<HistoryEntry> page,
                              engine_.ListEntries(account.id, version, kPageSize));
      for (const HistoryEntry& line : page) {
        const Entry& entry = line.entry;
        report_.entries += 1;
        if (entry.account_version != version + 1) {
          Violation(absl::StrCat("account ", account.id, ": entry version ",
                                 entry.account_version, " follows ", version));
        }
        if (entry.asset != account.asset) {
          Violation(absl::StrCat("account ", account.id, " holds ", account.asset,
                                 " but has a ", entry.asset, " entry"));
        }
        std::optional<Amount> next = CheckedAdd(sum, entry.amount);
        if (!next.has_value()) {
          Violation(absl::StrCat("account ", account.id, ": entry sum overflows"));
          return absl::OkStatus();
        }
        sum = *next;
        if (entry.balance_after != sum) {
          Violation(absl::StrCat("account ", account.id, " version ", entry.account_version,
                                 ": balance_after ", entry.balance_after, " but entries sum to ", sum));
        }
        version = entry.account_version;
        last_balance_after = entry.balance_after;
      }
      if (static_cast<int64_t>(page.size()) < kPageSize) break;
    }
    if (account.balance != sum || account.balance != last_balance_after) {
      Violation(absl::StrCat("account ", account.id, ": balance ", account.balance,
                             " but its entries sum to ", sum));
    }
    if (account.version != version) {
      Violation(absl::StrCat("account ", account.id, ": version ", account.version, " but it has ",
                             version, " entries"));
    }
    if (account.balance < account.BalanceFloor()) {
      Violation(absl::StrCat("account ", account.id, ": balance ", account.balance,
                             " is below its floor ", account.BalanceFloor()));
    }
    Amount& total = report_.balance_totals[account.asset];
    total = CheckedAdd(total, account.balance).value_or(total);
    return absl::OkStatus();
  }

  // Every account starts at zero and every transaction balances, so per asset the
  // balances of all accounts must sum to zero.
  void AuditConservation() {
    for (const auto& [asset, total] : report_.balance_totals) {
      if (total != 0) Violation(absl::StrCat(asset, " balances sum to ", total, ", not 0"));
    }
  }

  absl::Status AuditKeys() {
    std::optional<KeyIdentity> after;
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<KeyRecord> page, engine_.ListKeyRecords(after, kPageSize));
      LEDGER_RETURN_IF_ERROR(AuditKeyPage(page));
      if (static_cast<int64_t>(page.size()) < kPageSize) return absl::OkStatus();
      after = page.back().identity;
    }
  }

  // The page's transactions in one read (GetTransactions), not a read per key.
  absl::Status AuditKeyPage(const std::vector<KeyRecord>& page) {
    std::set<std::string> ids;
    for (const KeyRecord& record : page) ids.insert(record.transaction_id);
    LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> found,
                            engine_.GetTransactions({ids.begin(), ids.end()}));
    std::map<std::string, std::string> fingerprints;
    for (Transaction& transaction : found) {
      fingerprints[transaction.id] = std::move(transaction.fingerprint);
    }
    for (const KeyRecord& record : page) AuditKey(record, fingerprints);
    return absl::OkStatus();
  }

  // `fingerprints`: the fingerprint of each transaction the key's page points at.
  void AuditKey(const KeyRecord& record, const std::map<std::string, std::string>& fingerprints) {
    report_.key_records += 1;
    auto transaction = fingerprints.find(record.transaction_id);
    if (transaction == fingerprints.end()) {
      Violation(absl::StrCat("key ", record.identity.Encoded(), " points at missing transaction ",
                             record.transaction_id));
    } else if (transaction->second != record.fingerprint) {
      Violation(absl::StrCat("key ", record.identity.Encoded(), " fingerprint differs from ",
                             "its transaction's"));
    }
  }

  Engine& engine_;
  VerifyReport report_;
};

}  // namespace

std::string VerifyReport::ToText() const {
  std::string text = absl::StrCat("verify: ", ok() ? "OK" : "FAILED", "\n",
                                  "  accounts      ", accounts, "\n",
                                  "  transactions  ", transactions, "\n",
                                  "  entries       ", entries, "\n",
                                  "  key records   ", key_records, "\n",
                                  "  holds         ", holds, "\n");
  for (const auto& [asset, total] : balance_totals) {
    absl::StrAppend(&text, "  sum of ", asset, " balances ", total, "\n");
  }
  absl::StrAppend(&text, "  violations    ", violation_count, "\n");
  for (const std::string& violation : violations) absl::StrAppend(&text, "    - ", violation, "\n");
  return text;
}

nlohmann::json VerifyReport::ToJson() const {
  return {{"ok", ok()},
          {"accounts", accounts},
          {"transactions", transactions},
          {"entries", entries},
          {"key_records", key_records},
          {"holds", holds},
          {"balance_totals", balance_totals},
          {"violation_count", violation_count},
          {"violations", violations}};
}

absl::StatusOr<VerifyReport> VerifyLedger(Engine& engine) { return Auditor(engine).Run(); }

}  // namespace ledger
