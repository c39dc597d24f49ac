#include "tests/property/broken_engines.h"

#include <utility>

#include "base/status.h"

namespace ledger::property {
namespace {

// The submit's transaction, minus the claim: ClaimKey reads the record in another
// transaction that ends at once, so the key is never held while posting.
class SplitClaimTransaction final : public StorageTransaction {
 public:
  SplitClaimTransaction(Engine& engine, BeginOptions options,
                        const std::function<void(const KeyIdentity&)>& after_claim)
      : engine_(engine), options_(options), after_claim_(after_claim) {}

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override {
    std::optional<KeyRecord> existing;
    {
      LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> claim, engine_.Begin(options_));
      LEDGER_ASSIGN_OR_RETURN(existing, claim->ClaimKey(intended));
      claim->Rollback();  // the bug: the hold ends here, before anything is posted
    }
    if (after_claim_) after_claim_(intended.identity);
    LEDGER_ASSIGN_OR_RETURN(inner_, engine_.Begin(options_));
    return existing;
  }
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->LoadTransaction(id);
  }
  absl::StatusOr<bool> IsReversed(std::string_view id) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->IsReversed(id);
  }
  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->LockAccounts(sorted_ids);
  }
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id,
                                            absl::Time since) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->LoadDebitUsage(account_id, since);
  }
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->LoadHolds(ids);
  }
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->LoadHoldTotals(account_id, now, since);
  }
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->WriteTransaction(transaction, updated_accounts);
  }
  absl::Status RecordKey(const KeyRecord& record) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    // Broken on purpose twice over: every engine refuses to overwrite a live record (the
    // last line of defence against a bypassed claim); this one drops the refusal and
    // lets the racer post anyway, as an engine without that guard would.
    absl::Status recorded = inner_->RecordKey(record);
    if (IsRetryable(recorded)) return absl::OkStatus();
    return recorded;
  }
  absl::Status AppendEvent(const OutboxEvent& event) override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->AppendEvent(event);
  }
  absl::Status Commit() override {
    LEDGER_RETURN_IF_ERROR(EnsureBegun());
    return inner_->Commit();
  }
  void Rollback() override {
    if (inner_ != nullptr) inner_->Rollback();
  }
  absl::Status EndWithoutWrites() override {
    return inner_ != nullptr ? inner_->EndWithoutWrites() : absl::OkStatus();
  }

 private:
  absl::Status EnsureBegun() {
    if (inner_ != nullptr) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(inner_, engine_.Begin(options_));
    return absl::OkStatus();
  }

  Engine& engine_;
  BeginOptions options_;
  const std::function<void(const KeyIdentity&)>& after_claim_;
  std::unique_ptr<StorageTransaction> inner_;
};

using ::ledger::testing::ForwardingTransaction;

class UncountedHoldsTransaction final : public ForwardingTransaction {
 public:
  using ForwardingTransaction::ForwardingTransaction;

  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override {
    absl::StatusOr<std::vector<Account>> locked = inner().LockAccounts(sorted_ids);
    if (locked.ok()) {
      for (const Account& account : *locked) {
        pending_[account.id] = {account.pending_debits, account.pending_credits};
      }
    }
    return locked;
  }
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> holds, inner().LoadHolds(ids));
    for (const Hold& hold : holds) {
      if (hold.status == HoldStatus::kPending) settling_[hold.id] = hold.terms;
    }
    return holds;
  }
  // The bug: every pending hold counted as lapsed, but for the ones this submit settles
  // (so the ledger's own release of those stays consistent and the failure is an overspend).
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override {
    LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals totals,
                            inner().LoadHoldTotals(account_id, now, since));
    auto locked = pending_.find(std::string(account_id));
    if (locked == pending_.end()) return totals;
    totals.lapsed_debits = locked->second.first;
    totals.lapsed_credits = locked->second.second;
    for (const auto& [id, terms] : settling_) {
      if (terms.from == account_id) totals.lapsed_debits -= terms.amount;
      if (terms.to == account_id) totals.lapsed_credits -= terms.amount;
    }
    return totals;
  }

 private:
  std::map<std::string, std::pair<Amount, Amount>> pending_;  // as locked: debits, credits
  std::map<std::string, HoldTerms> settling_;                 // pending holds loaded, by id
};

// Only a submit's reads are broken (it claims keys; a sweep does not), as when the
// submit path reads holds with a statement of its own.
class CapturableAfterExpiryTransaction final : public ForwardingTransaction {
 public:
  using ForwardingTransaction::ForwardingTransaction;

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override {
    submit_ = true;
    return inner().ClaimKey(intended);
  }
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override {
    submit_ = true;
    return inner().ClaimKeys(intended);
  }
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> holds, inner().LoadHolds(ids));
    if (!submit_) return holds;
    for (Hold& hold : holds) hold.terms.expires_at.reset();  // the bug
    return holds;
  }

 private:
  bool submit_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StorageTransaction>> UncountedHoldsEngine::Begin(
    const BeginOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> inner, inner().Begin(options));
  return std::make_unique<UncountedHoldsTransaction>(std::move(inner));
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> CapturableAfterExpiryEngine::Begin(
    const BeginOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> inner, inner().Begin(options));
  return std::make_unique<CapturableAfterExpiryTransaction>(std::move(inner));
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> SplitClaimEngine::Begin(
    const BeginOptions& options) {
  return std::make_unique<SplitClaimTransaction>(inner(), options, after_claim_);
}

}  // namespace ledger::property
