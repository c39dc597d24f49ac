// The memory engine. One mutex guards the committed state and is held by a storage
// transaction from its first step after the claims to its end, so transactions run one
// at a time, like SQLite's single writer. Same-key submitters park on a second, smaller lock table
// BEFORE taking the state mutex, so a waiter never blocks unrelated work. Writes are
// buffered in the transaction and applied at Commit, all at once.
#include "engines/memory/memory_engine.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status.h"
#include "engines/common/error_table.h"
#include "engines/common/hold_writes.h"
#include "engines/memory/memory_webhook_store.h"
#include "engines/memory/memory_work_claim_store.h"

namespace ledger {
namespace {

using IdentityKey = std::tuple<std::string, std::string, std::string>;

IdentityKey KeyOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

struct State {
  std::map<std::string, Asset, std::less<>> assets;
  std::map<std::string, Account, std::less<>> accounts;
  std::map<std::string, Transaction, std::less<>> transactions;
  std::set<std::string, std::less<>> reversed;  // ids that a reversal points at
  std::map<std::string, std::vector<HistoryEntry>, std::less<>> entries;  // by account, version order
  // By account, in version order: the running maximum of the entries' created_at, the
  // memory engine's index for EntryAsOf (never decreasing, so binary-searchable).
  std::map<std::string, std::vector<absl::Time>, std::less<>> entry_times_running_max;
  // By account: debit amounts in time order, for velocity windows. Commit order is not
  // time order: a submit reads the clock before it waits for the state lock.
  std::map<std::string, std::multimap<absl::Time, Amount>, std::less<>> debits_by_time;
  std::map<IdentityKey, KeyRecord> keys;
  std::vector<OutboxEvent> events;
  std::map<std::string, Hold, std::less<>> holds;
};

PendingHoldTotals TotalsOf(const State& state, std::string_view account_id, absl::Time now,
                           absl::Time since) {
  PendingHoldTotals totals;
  for (const auto& [id, hold] : state.holds) {
    if (hold.status != HoldStatus::kPending) continue;
    const HoldTerms& terms = hold.terms;
    if (hold.LapsedAt(now)) {
      if (terms.from == account_id) totals.lapsed_debits += terms.amount;
      if (terms.to == account_id) totals.lapsed_credits += terms.amount;
    } else if (terms.from == account_id && hold.created_at >= since) {
      totals.reserving_since.count += 1;
      totals.reserving_since.amount += terms.amount;
    }
  }
  return totals;
}

std::vector<Hold> FindHolds(const State& state, const std::vector<std::string>& ids) {
  std::vector<Hold> found;
  for (const std::string& id : ids) {
    if (auto it = state.holds.find(id); it != state.holds.end()) found.push_back(it->second);
  }
  return found;
}

HoldStatus SettledStatusOf(OperationKind kind) {
  if (kind == OperationKind::kCapture) return HoldStatus::kCaptured;
  return kind == OperationKind::kVoid ? HoldStatus::kVoided : HoldStatus::kExpired;
}

class MemoryEngine;

class MemoryTransaction final : public StorageTransaction {
 public:
  MemoryTransaction(MemoryEngine& engine, BeginOptions options)
      : engine_(engine), options_(options) {}
  ~MemoryTransaction() override { Rollback(); }

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override;
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override;
  absl::StatusOr<bool> IsReversed(std::string_view id) override;
  absl::StatusOr<std::vector<Account>> LockAccounts(const std::vector<std::string>& sorted_ids) override;
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id, absl::Time since) override;
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    return FindHolds(FlushedState(), ids);
  }
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override {
    return TotalsOf(FlushedState(), account_id, now, since);
  }
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override;
  absl::Status RecordKey(const KeyRecord& record) override;
  absl::Status AppendEvent(const OutboxEvent& event) override;
  absl::Status Commit() override;
  void Rollback() override;

 private:
  State& LockedState();
  // LockedState with the writes of this transaction applied: in a unit of work
  // (ledger/unit_of_work.h) a second submit reads after the first one's writes. The
  // state before the first of them is kept, for Rollback. A lone submit reads before it
  // writes, so it never copies.
  State& FlushedState();
  void Apply(State& state);

  MemoryEngine& engine_;
  BeginOptions options_;
  std::vector<IdentityKey> held_keys_;
  bool state_locked_ = false;
  // What Commit applies, in call order (a batch writes many transactions).
  std::vector<Transaction> pending_transactions_;
  std::vector<Account> pending_accounts_;
  std::vector<KeyRecord> pending_keys_;
  std::vector<OutboxEvent> pending_events_;
  // Set by FlushedState once it applied writes before Commit: what Rollback restores.
  std::optional<State> state_before_;
  int64_t next_event_sequence_before_ = 0;
};

class MemoryEngine final : public Engine {
 public:
  std::string_view name() const override { return "memory"; }
  absl::Status Migrate() override { return absl::OkStatus(); }

  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    return std::make_unique<MemoryTransaction>(*this, options);
  }

  absl::Status PutAsset(const Asset& asset) override {
    absl::MutexLock lock(&state_mutex_);
    auto [it, inserted] = state_.assets.emplace(asset.code, asset);
    if (!inserted && it->second.scale != asset.scale) {
      return absl::AlreadyExistsError(
          absl::StrCat("asset ", asset.code, " exists with scale ", it->second.scale));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<Asset>> GetAsset(std::string_view code) override {
    absl::MutexLock lock(&state_mutex_);
    auto it = state_.assets.find(code);
    if (it == state_.assets.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::vector<Asset>> ListAssets() override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<Asset> assets;
    for (const auto& [code, asset] : state_.assets) assets.push_back(asset);
    return assets;
  }

  absl::Status InsertAccount(const Account& account) override {
    absl::MutexLock lock(&state_mutex_);
    if (state_.assets.count(account.asset) == 0) {
      return absl::FailedPreconditionError(absl::StrCat("asset ", account.asset, " is not defined"));
    }
    if (!state_.accounts.emplace(account.id, account).second) {
      return absl::AlreadyExistsError(absl::StrCat("account ", account.id, " already exists"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<Account>> GetAccount(std::string_view id) override {
    absl::MutexLock lock(&state_mutex_);
    auto it = state_.accounts.find(id);
    if (it == state_.accounts.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::vector<Account>> ListAccounts(std::string_view after_id,
                                                    int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<Account> page;
    for (auto it = state_.accounts.upper_bound(after_id);
         it != state_.accounts.end() && static_cast<int64_t>(page.size()) < limit; ++it) {
      page.push_back(it->second);
    }
    return page;
  }

  absl::StatusOr<bool> CloseAccountIfZeroBalance(std::string_view id) override {
    absl::MutexLock lock(&state_mutex_);  // a submit holds it until it commits
    auto it = state_.accounts.find(id);
    if (it == state_.accounts.end() || it->second.balance != 0 || it->second.pending_debits != 0 ||
        it->second.pending_credits != 0) {
      return false;
    }
    it->second.closed = true;
    return true;
  }

  absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) override {
    absl::MutexLock lock(&state_mutex_);
    return FindTransaction(id);
  }

  absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                            int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<Transaction> page;
    for (auto it = state_.transactions.upper_bound(after_id);
         it != state_.transactions.end() && static_cast<int64_t>(page.size()) < limit; ++it) {
      page.push_back(it->second);
    }
    return page;
  }

  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id,
                                                        int64_t after_version,
                                                        int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<HistoryEntry> page;
    auto it = state_.entries.find(account_id);
    if (it == state_.entries.end()) return page;
    // Versions are 1..N in order, so version v sits at index v - 1.
    for (size_t i = static_cast<size_t>(std::max<int64_t>(after_version, 0));
         i < it->second.size() && static_cast<int64_t>(page.size()) < limit; ++i) {
      page.push_back(it->second[i]);
    }
    return page;
  }

  absl::StatusOr<std::optional<HistoryEntry>> EntryAsOf(std::string_view account_id,
                                                        absl::Time as_of) override {
    absl::MutexLock lock(&state_mutex_);
    auto times = state_.entry_times_running_max.find(account_id);
    if (times == state_.entry_times_running_max.end()) return std::nullopt;
    auto after = std::upper_bound(times->second.begin(), times->second.end(), as_of);
    if (after == times->second.begin()) return std::nullopt;
    return state_.entries.find(account_id)->second[after - times->second.begin() - 1];
  }

  absl::StatusOr<std::vector<Transaction>> FindTransactions(
      const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
      int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<const Transaction*> matching;
    for (const auto& [id, transaction] : state_.transactions) {
      if (after.has_value() &&
          std::tie(transaction.created_at, transaction.id) <= std::tie(after->created_at, after->id)) {
        continue;
      }
      if (TransactionMatches(transaction, filter)) matching.push_back(&transaction);
    }
    std::sort(matching.begin(), matching.end(), [](const Transaction* a, const Transaction* b) {
      return std::tie(a->created_at, a->id) < std::tie(b->created_at, b->id);
    });
    std::vector<Transaction> page;
    for (size_t i = 0; i < matching.size() && static_cast<int64_t>(page.size()) < limit; ++i) {
      page.push_back(*matching[i]);
    }
    return page;
  }

  absl::StatusOr<std::optional<KeyRecord>> GetKeyRecord(const KeyIdentity& identity) override {
    absl::MutexLock lock(&state_mutex_);
    auto it = state_.keys.find(KeyOf(identity));
    if (it == state_.keys.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<KeyRecord> page;
    auto it = after.has_value() ? state_.keys.upper_bound(KeyOf(*after)) : state_.keys.begin();
    for (; it != state_.keys.end() && static_cast<int64_t>(page.size()) < limit; ++it) {
      page.push_back(it->second);
    }
    return page;
  }

  absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    int64_t deleted = 0;
    for (auto it = state_.keys.begin(); it != state_.keys.end() && deleted < limit;) {
      if (it->second.ExpiredAt(now)) {
        it = state_.keys.erase(it);
        ++deleted;
      } else {
        ++it;
      }
    }
    return deleted;
  }

  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                      int64_t limit) override {
    std::vector<OutboxEvent> page;
    {
      absl::MutexLock lock(&state_mutex_);
      for (const OutboxEvent& event : state_.events) {
        if (event.sequence > after_sequence && static_cast<int64_t>(page.size()) < limit) {
          page.push_back(event);
        }
      }
    }
    // Transactions are never removed: a later read still holds every event's.
    LEDGER_RETURN_IF_ERROR(FillEventPayloads(
        page, [this](const std::vector<std::string>& ids) { return GetTransactions(ids); }));
    return page;
  }

  absl::StatusOr<std::optional<Hold>> GetHold(std::string_view id) override {
    absl::MutexLock lock(&state_mutex_);
    auto it = state_.holds.find(id);
    if (it == state_.holds.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::vector<Hold>> ListHolds(std::string_view account_id, std::string_view after_id,
                                              int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<Hold> page;
    for (auto it = state_.holds.upper_bound(after_id);
         it != state_.holds.end() && static_cast<int64_t>(page.size()) < limit; ++it) {
      const HoldTerms& terms = it->second.terms;
      if (account_id.empty() || terms.from == account_id || terms.to == account_id) {
        page.push_back(it->second);
      }
    }
    return page;
  }

  absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) override {
    absl::MutexLock lock(&state_mutex_);
    std::vector<Hold> lapsed;
    for (const auto& [id, hold] : state_.holds) {
      if (hold.LapsedAt(now)) lapsed.push_back(hold);
    }
    std::sort(lapsed.begin(), lapsed.end(), [](const Hold& a, const Hold& b) {
      return std::tie(*a.terms.expires_at, a.id) < std::tie(*b.terms.expires_at, b.id);
    });
    if (static_cast<int64_t>(lapsed.size()) > limit) lapsed.resize(limit);
    return lapsed;
  }

  absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id, absl::Time now,
                                                      absl::Time since) override {
    absl::MutexLock lock(&state_mutex_);
    return TotalsOf(state_, account_id, now, since);
  }

  WorkClaimStore& work_claims() override { return work_claims_; }
  WebhookStore& webhooks() override { return webhooks_; }

 private:
  friend class MemoryTransaction;

  std::optional<Transaction> FindTransaction(std::string_view id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mutex_) {
    auto it = state_.transactions.find(id);
    if (it == state_.transactions.end()) return std::nullopt;
    return it->second;
  }

  // Parks until no other transaction holds `key`, or the wait bound passes.
  absl::Status HoldKey(const IdentityKey& key, const WaitPolicy& wait) {
    absl::MutexLock lock(&keys_mutex_);
    absl::Time deadline = absl::Now() + wait.wait_max;
    while (held_keys_.count(key) > 0) {
      if (wait.fail_fast() || keys_released_.WaitWithDeadline(&keys_mutex_, deadline)) {
        if (held_keys_.count(key) > 0) {
          return InProgressError("another submit with this idempotency key is still running");
        }
      }
    }
    held_keys_.insert(key);
    return absl::OkStatus();
  }

  void ReleaseKey(const IdentityKey& key) {
    absl::MutexLock lock(&keys_mutex_);
    held_keys_.erase(key);
    keys_released_.SignalAll();
  }

  absl::Mutex keys_mutex_;
  absl::CondVar keys_released_;
  std::set<IdentityKey> held_keys_ ABSL_GUARDED_BY(keys_mutex_);

  absl::Mutex state_mutex_;  // held by a transaction across calls: see LockedState()
  State state_ ABSL_GUARDED_BY(state_mutex_);
  int64_t next_event_sequence_ ABSL_GUARDED_BY(state_mutex_) = 1;

  memory_internal::MemoryWorkClaimStore work_claims_;
  memory_internal::MemoryWebhookStore webhooks_;
};

State& MemoryTransaction::LockedState() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!state_locked_) {
    engine_.state_mutex_.Lock();
    state_locked_ = true;
  }
  return engine_.state_;
}

// The record is written by RecordKey alone: nothing here is visible to anyone else.
absl::StatusOr<std::optional<KeyRecord>> MemoryTransaction::ClaimKey(const KeyRecord& intended)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  IdentityKey key = KeyOf(intended.identity);
  // A unit of work may claim a key it holds already (a second submit with it).
  if (std::find(held_keys_.begin(), held_keys_.end(), key) == held_keys_.end()) {
    LEDGER_RETURN_IF_ERROR(engine_.HoldKey(key, options_.wait));
    held_keys_.push_back(key);
  }
  // A batch claims many keys before any other step. The state is held only while its
  // record is read, so no claim waits for a key while holding the state that key's
  // holder needs. Only the key's holder writes its record, so the read stays true.
  const bool locked_here = !state_locked_;
  State& state = FlushedState();
  std::optional<KeyRecord> record;
  if (auto it = state.keys.find(key); it != state.keys.end()) record = it->second;
  if (locked_here) {
    state_locked_ = false;
    engine_.state_mutex_.Unlock();
  }
  return record;
}

absl::StatusOr<std::optional<Transaction>> MemoryTransaction::LoadTransaction(std::string_view id) {
  State& state = FlushedState();
  auto it = state.transactions.find(id);
  if (it == state.transactions.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<bool> MemoryTransaction::IsReversed(std::string_view id) {
  return FlushedState().reversed.count(id) > 0;
}

absl::StatusOr<std::vector<Account>> MemoryTransaction::LockAccounts(
    const std::vector<std::string>& sorted_ids) {
  State& state = FlushedState();  // the state mutex already excludes every other writer
  std::vector<Account> found;
  for (const std::string& id : sorted_ids) {
    auto it = state.accounts.find(id);
    if (it != state.accounts.end()) found.push_back(it->second);
  }
  return found;
}

absl::StatusOr<DebitUsage> MemoryTransaction::LoadDebitUsage(std::string_view account_id,
                                                             absl::Time since) {
  State& state = FlushedState();
  DebitUsage usage;
  auto it = state.debits_by_time.find(account_id);
  if (it == state.debits_by_time.end()) return usage;
  for (auto debit = it->second.lower_bound(since); debit != it->second.end(); ++debit) {
    usage.count += 1;
    usage.amount = CheckedAdd(usage.amount, debit->second).value_or(std::numeric_limits<Amount>::max());
  }
  return usage;
}

absl::Status MemoryTransaction::WriteTransaction(const Transaction& transaction,
                                                 const std::vector<Account>& updated_accounts) {
  LEDGER_RETURN_IF_ERROR(engine_common::CheckHoldFields("memory", transaction));
  State& state = LockedState();
  // A unique violation during the write: the shared error table's answer, as on the
  // SQL engines (a concurrent writer won a race; the rerun re-checks).
  auto taken = [&](auto predicate) {
    return std::any_of(pending_transactions_.begin(), pending_transactions_.end(), predicate);
  };
  if (state.transactions.count(transaction.id) > 0 ||
      taken([&](const Transaction& pending) { return pending.id == transaction.id; })) {
    return engine_common::StatusForError(
        engine_common::ErrorClass::kUniqueViolation, engine_common::ErrorPhase::kWrite,
        absl::StrCat("memory: transaction ", transaction.id, " exists"));
  }
  if (transaction.reversal_of.has_value() &&
      (state.reversed.count(*transaction.reversal_of) > 0 ||
       taken([&](const Transaction& pending) {
         return pending.reversal_of == transaction.reversal_of;
       }))) {
    return engine_common::StatusForError(
        engine_common::ErrorClass::kUniqueViolation, engine_common::ErrorPhase::kWrite,
        absl::StrCat("memory: ", *transaction.reversal_of, " is already reversed"));
  }
  if (transaction.hold_id.has_value()) {
    auto hold = state.holds.find(*transaction.hold_id);
    if (hold == state.holds.end() || hold->second.status != HoldStatus::kPending ||
        taken([&](const Transaction& pending) { return pending.hold_id == transaction.hold_id; })) {
      return engine_common::HoldNotPendingError("memory", *transaction.hold_id);
    }
  }
  pending_transactions_.push_back(transaction);
  pending_accounts_.insert(pending_accounts_.end(), updated_accounts.begin(),
                           updated_accounts.end());
  return absl::OkStatus();
}

absl::Status MemoryTransaction::RecordKey(const KeyRecord& record) {
  State& state = LockedState();
  // Replaces only an expired record: a live one means the claim was bypassed, and
  // overwriting it would lose it (a unique violation during the write, as elsewhere).
  auto existing = state.keys.find(KeyOf(record.identity));
  if (existing != state.keys.end() && !existing->second.ExpiredAt(record.created_at)) {
    return engine_common::StatusForError(
        engine_common::ErrorClass::kUniqueViolation, engine_common::ErrorPhase::kWrite,
        absl::StrCat("memory: key ", record.identity.Encoded(),
                     " already holds a live committed record"));
  }
  pending_keys_.push_back(record);
  return absl::OkStatus();
}

absl::Status MemoryTransaction::AppendEvent(const OutboxEvent& event) {
  LockedState();
  pending_events_.push_back(event);
  return absl::OkStatus();
}

absl::Status MemoryTransaction::Commit() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  Apply(LockedState());
  state_before_.reset();  // applied for good
  Rollback();  // what was pending is applied: this only clears it and releases the locks
  return absl::OkStatus();
}

State& MemoryTransaction::FlushedState() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  State& state = LockedState();
  if (pending_transactions_.empty() && pending_accounts_.empty() && pending_keys_.empty() &&
      pending_events_.empty()) {
    return state;
  }
  if (!state_before_.has_value()) {
    state_before_ = state;
    next_event_sequence_before_ = engine_.next_event_sequence_;
  }
  Apply(state);
  pending_transactions_.clear();
  pending_accounts_.clear();
  pending_keys_.clear();
  pending_events_.clear();
  return state;
}

void MemoryTransaction::Apply(State& state) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (const Transaction& transaction : pending_transactions_) {
    for (const Entry& entry : transaction.entries) {
      state.entries[entry.account_id].push_back({entry, transaction.id, transaction.created_at});
      std::vector<absl::Time>& times = state.entry_times_running_max[entry.account_id];
      times.push_back(times.empty() ? transaction.created_at
                                    : std::max(times.back(), transaction.created_at));
      if (entry.amount < 0) {
        state.debits_by_time[entry.account_id].emplace(transaction.created_at, -entry.amount);
      }
    }
    if (transaction.reversal_of.has_value()) state.reversed.insert(*transaction.reversal_of);
    if (transaction.hold.has_value()) {
      state.holds.emplace(transaction.id, Hold{transaction.id, *transaction.hold,
                                               transaction.created_at, HoldStatus::kPending,
                                               std::nullopt});
    }
    if (transaction.hold_id.has_value()) {
      Hold& hold = state.holds.at(*transaction.hold_id);
      hold.status = SettledStatusOf(transaction.kind);
      hold.settled_by = transaction.id;
    }
    state.transactions.emplace(transaction.id, transaction);
  }
  for (const Account& account : pending_accounts_) state.accounts[account.id] = account;
  for (const KeyRecord& record : pending_keys_) state.keys[KeyOf(record.identity)] = record;
  for (OutboxEvent event : pending_events_) {
    event.sequence = engine_.next_event_sequence_++;
    state.events.push_back(std::move(event));
  }
}

void MemoryTransaction::Rollback() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  pending_transactions_.clear();
  pending_accounts_.clear();
  pending_keys_.clear();
  pending_events_.clear();
  if (state_before_.has_value()) {  // writes applied before Commit: undo them
    engine_.state_ = *std::move(state_before_);
    engine_.next_event_sequence_ = next_event_sequence_before_;
    state_before_.reset();
  }
  if (state_locked_) {
    state_locked_ = false;
    engine_.state_mutex_.Unlock();
  }
  for (const IdentityKey& key : held_keys_) engine_.ReleaseKey(key);
  held_keys_.clear();
}

}  // namespace

std::unique_ptr<Engine> OpenMemoryEngine() { return std::make_unique<MemoryEngine>(); }

}  // namespace ledger
