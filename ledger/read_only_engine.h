// The Ledger's read engine (LedgerOptions::read_engine): an Engine that passes reads on to
// the engine it wraps and stops the process on anything that writes.
//
// Reads that allow a replica (ReadConsistency::kReplicaAllowed) go to a standby or
// another Galera node, which may lag the primary; claims, submits, units of work, hold
// sweeps, key pruning, run-idempotently and the webhook guard must never go there. The
// Ledger holds its read engine only through this wrapper, so a write path that reached
// it by mistake (Begin, PutAsset, InsertAccount, CloseAccountIfZeroBalance,
// PruneExpiredKeys, Migrate, work_claims(), webhooks()) fails LEDGER_CHECK in every
// build instead of writing to the wrong node. A new read on Engine is one forwarding
// line here (the compiler asks for it: this class must implement every pure read).
//
// Thread-safe as the wrapped engine is.
#ifndef LEDGER_LEDGER_READ_ONLY_ENGINE_H_
#define LEDGER_LEDGER_READ_ONLY_ENGINE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/engine.h"

namespace ledger::internal {

class ReadOnlyEngine final : public Engine {
 public:
  // `reads` must not be null.
  explicit ReadOnlyEngine(std::shared_ptr<Engine> reads);

  std::string_view name() const override { return reads_->name(); }

  // Reads: passed on.
  absl::StatusOr<std::optional<Asset>> GetAsset(std::string_view code) override {
    return reads_->GetAsset(code);
  }
  absl::StatusOr<std::vector<Asset>> ListAssets() override { return reads_->ListAssets(); }
  absl::StatusOr<std::optional<Account>> GetAccount(std::string_view id) override {
    return reads_->GetAccount(id);
  }
  absl::StatusOr<std::vector<Account>> ListAccounts(std::string_view after_id, int64_t limit) override {
    return reads_->ListAccounts(after_id, limit);
  }
  absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) override {
    return reads_->GetTransaction(id);
  }
  absl::StatusOr<std::vector<Transaction>> GetTransactions(const std::vector<std::string>& ids) override {
    return reads_->GetTransactions(ids);
  }
  absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                            int64_t limit) override {
    return reads_->ListTransactions(after_id, limit);
  }
  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id,
                                                        int64_t after_version, int64_t limit) override {
    return reads_->ListEntries(account_id, after_version, limit);
  }
  absl::StatusOr<std::optional<HistoryEntry>> EntryAsOf(std::string_view account_id,
                                                        absl::Time as_of) override {
    return reads_->EntryAsOf(account_id, as_of);
  }
  absl::StatusOr<std::vector<Transaction>> FindTransactions(
      const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
      int64_t limit) override {
    return reads_->FindTransactions(filter, after, limit);
  }
  absl::StatusOr<std::optional<KeyRecord>> GetKeyRecord(const KeyIdentity& identity) override {
    return reads_->GetKeyRecord(identity);
  }
  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override {
    return reads_->ListKeyRecords(after, limit);
  }
  absl::StatusOr<std::optional<Hold>> GetHold(std::string_view id) override { return reads_->GetHold(id); }
  absl::StatusOr<std::vector<Hold>> ListHolds(std::string_view account_id, std::string_view after_id,
                                              int64_t limit) override {
    return reads_->ListHolds(account_id, after_id, limit);
  }
  absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) override {
    return reads_->ListLapsedHolds(now, limit);
  }
  absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id, absl::Time now,
                                               absl::Time since) override {
    return reads_->HoldTotals(account_id, now, since);
  }
  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence, int64_t limit) override {
    return reads_->ListEvents(after_sequence, limit);
  }

  // Writes: a bug in the caller, stopped here (ledger/read_only_engine.cc).
  absl::Status Migrate() override;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;
  absl::Status PutAsset(const Asset& asset) override;
  absl::Status InsertAccount(const Account& account) override;
  absl::StatusOr<bool> CloseAccountIfZeroBalance(std::string_view id) override;
  absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) override;
  WorkClaimStore& work_claims() override;
  WebhookStore& webhooks() override;

 private:
  const std::shared_ptr<Engine> reads_;
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_READ_ONLY_ENGINE_H_
