// An Engine (and a StorageTransaction) that forwards every call to a wrapped one: the
// base of test wrappers (the fault-injecting engine, the property suite's broken and
// crashing engines), which override only what they change. Thread-safe as far as the
// wrapped engine is.
#ifndef LEDGER_TESTS_SUPPORT_FORWARDING_ENGINE_H_
#define LEDGER_TESTS_SUPPORT_FORWARDING_ENGINE_H_

#include <memory>
#include <utility>

#include "ledger/engine.h"

namespace ledger::testing {

class ForwardingTransaction : public StorageTransaction {
 public:
  explicit ForwardingTransaction(std::unique_ptr<StorageTransaction> inner)
      : inner_(std::move(inner)) {}

  void ExpectAccountLocks(const std::vector<std::string>& sorted_ids) override {
    inner_->ExpectAccountLocks(sorted_ids);
  }
  bool TakesAccountLockHint() const override { return inner_->TakesAccountLockHint(); }
  void ExpectNoWrites() override { inner_->ExpectNoWrites(); }
  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override {
    return inner_->ClaimKey(intended);
  }
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override {
    return inner_->ClaimKeys(intended);
  }
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override {
    return inner_->LoadTransaction(id);
  }
  absl::StatusOr<std::vector<Transaction>> LoadTransactions(
      const std::vector<std::string>& ids) override {
    return inner_->LoadTransactions(ids);
  }
  absl::StatusOr<bool> IsReversed(std::string_view id) override { return inner_->IsReversed(id); }
  absl::StatusOr<std::vector<Account>> LockAccounts(const std::vector<std::string>& ids) override {
    return inner_->LockAccounts(ids);
  }
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id, absl::Time since) override {
    return inner_->LoadDebitUsage(account_id, since);
  }
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    return inner_->LoadHolds(ids);
  }
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override {
    return inner_->LoadHoldTotals(account_id, now, since);
  }
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override {
    return inner_->WriteTransaction(transaction, updated_accounts);
  }
  absl::Status RecordKey(const KeyRecord& record) override { return inner_->RecordKey(record); }
  absl::Status AppendEvent(const OutboxEvent& event) override { return inner_->AppendEvent(event); }
  absl::Status Commit() override { return inner_->Commit(); }
  void Rollback() override { inner_->Rollback(); }
  absl::Status EndWithoutWrites() override { return inner_->EndWithoutWrites(); }
  absl::StatusOr<SqlRows> RunCallerSql(std::string_view sql,
                                       const std::vector<SqlValue>& parameters) override {
    return inner_->RunCallerSql(sql, parameters);
  }
  absl::StatusOr<void*> NativeHandle() override { return inner_->NativeHandle(); }
  absl::StatusOr<bool> StillUsable() override { return inner_->StillUsable(); }

 protected:
  StorageTransaction& inner() { return *inner_; }

 private:
  std::unique_ptr<StorageTransaction> inner_;
};

class ForwardingEngine : public Engine {
 public:
  explicit ForwardingEngine(std::shared_ptr<Engine> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  absl::Status Migrate() override { return inner_->Migrate(); }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    return inner_->Begin(options);
  }
  absl::Status PutAsset(const Asset& asset) override { return inner_->PutAsset(asset); }
  absl::StatusOr<std::optional<Asset>> GetAsset(std::string_view code) override {
    return inner_->GetAsset(code);
  }
  absl::StatusOr<std::vector<Asset>> ListAssets() override { return inner_->ListAssets(); }
  absl::Status InsertAccount(const Account& account) override {
    return inner_->InsertAccount(account);
  }
  absl::StatusOr<std::optional<Account>> GetAccount(std::string_view id) override {
    return inner_->GetAccount(id);
  }
  absl::StatusOr<std::vector<Account>> ListAccounts(std::string_view after_id,
                                                    int64_t limit) override {
    return inner_->ListAccounts(after_id, limit);
  }
  absl::StatusOr<bool> CloseAccountIfZeroBalance(std::string_view id) override {
    return inner_->CloseAccountIfZeroBalance(id);
  }
  absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) override {
    return inner_->GetTransaction(id);
  }
  absl::StatusOr<std::vector<Transaction>> GetTransactions(
      const std::vector<std::string>& ids) override {
    return inner_->GetTransactions(ids);
  }
  absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                            int64_t limit) override {
    return inner_->ListTransactions(after_id, limit);
  }
  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id,
                                                        int64_t after_version,
                                                        int64_t limit) override {
    return inner_->ListEntries(account_id, after_version, limit);
  }
  absl::StatusOr<std::optional<HistoryEntry>> EntryAsOf(std::string_view account_id,
                                                        absl::Time as_of) override {
    return inner_->EntryAsOf(account_id, as_of);
  }
  absl::StatusOr<std::vector<Transaction>> FindTransactions(
      const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
      int64_t limit) override {
    return inner_->FindTransactions(filter, after, limit);
  }
  absl::StatusOr<std::optional<KeyRecord>> GetKeyRecord(const KeyIdentity& identity) override {
    return inner_->GetKeyRecord(identity);
  }
  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override {
    return inner_->ListKeyRecords(after, limit);
  }
  absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) override {
    return inner_->PruneExpiredKeys(now, limit);
  }
  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                      int64_t limit) override {
    return inner_->ListEvents(after_sequence, limit);
  }
  absl::StatusOr<std::optional<Hold>> GetHold(std::string_view id) override {
    return inner_->GetHold(id);
  }
  absl::StatusOr<std::vector<Hold>> ListHolds(std::string_view account_id, std::string_view after_id,
                                              int64_t limit) override {
    return inner_->ListHolds(account_id, after_id, limit);
  }
  absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) override {
    return inner_->ListLapsedHolds(now, limit);
  }
  absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id, absl::Time now,
                                               absl::Time since) override {
    return inner_->HoldTotals(account_id, now, since);
  }
  WorkClaimStore& work_claims() override { return inner_->work_claims(); }
  WebhookStore& webhooks() override { return inner_->webhooks(); }

 public:
  Engine& inner() { return *inner_; }

 private:
  std::shared_ptr<Engine> inner_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_FORWARDING_ENGINE_H_
