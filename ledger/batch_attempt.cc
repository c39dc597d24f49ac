#include "ledger/batch_attempt.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/invariants.h"
#include "ledger/json.h"

namespace ledger {
namespace {

using internal::ItemPlan;
using internal::PlannedPostings;
using posting_rules::AccountsById;

constexpr char kCommittedEventType[] = "transaction.committed";

// The global claim order: (namespace, scope, key), byte-wise.
using ClaimOrder = std::tuple<std::string, std::string, std::string>;
ClaimOrder ClaimOrderOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

}  // namespace

WaitPolicy LeastClaimWait(const std::vector<internal::BatchItem*>& items) {
  LEDGER_CHECK(!items.empty()) << "the claim wait of no items";
  WaitPolicy wait = items.front()->request->claim.wait;
  for (const internal::BatchItem* item : items) {
    wait.wait_max = std::min(wait.wait_max, item->request->claim.wait.wait_max);
  }
  return wait;
}

Ledger::BatchAttempt::BatchAttempt(Ledger& ledger, std::vector<internal::BatchItem*> items,
                                   bool atomic, std::optional<absl::Time> claim_deadline)
    : ledger_(ledger),
      items_(std::move(items)),
      atomic_(atomic),
      claim_deadline_(claim_deadline),
      decisions_(items_.size()),
      postings_(items_.size()),
      rides_on_commit_(items_.size(), false) {
  state_.now = ledger_.clock_->Now();
}

BeginOptions Ledger::BatchAttempt::begin_options() const {
  // One claim wait for the transaction: the least the items allow, and no further than
  // the deadline (real time, as the engines wait) once the batch's claims ran out of it.
  WaitPolicy wait = LeastClaimWait(items_);
  if (claim_deadline_.has_value()) {
    wait.wait_max = std::clamp(*claim_deadline_ - absl::Now(), absl::ZeroDuration(), wait.wait_max);
  }
  return BeginOptions{wait};
}

absl::Status Ledger::BatchAttempt::Run(StorageTransaction& tx) {
  LEDGER_CHECK(tx_ == nullptr) << "a batch attempt runs once";
  tx_ = &tx;
  // Claims one by one (after a claim of many ran out of wait) take no hint: the locks
  // would come before the later keys.
  if (!claim_deadline_.has_value() && !ledger_.skip_idempotency_ && tx_->TakesAccountLockHint()) {
    if (std::vector<std::string> ids = AccountsNamedUpFront(); !ids.empty()) {
      tx_->ExpectAccountLocks(ids);
    }
  }
  LEDGER_RETURN_IF_ERROR(ClaimKeys());
  LEDGER_RETURN_IF_ERROR(LoadTargets());
  LEDGER_RETURN_IF_ERROR(LockAccounts());
  // Read again under the locks, so what depends on the time (has a hold lapsed?) is
  // ordered like the locks: a submit that waited for them cannot capture a hold that
  // the submit before it, holding them, saw lapse.
  state_.now = std::max(state_.now, ledger_.clock_->Now());
  for (size_t i = 0; i < items_.size(); ++i) {
    LEDGER_RETURN_IF_ERROR(Decide(i));
    const SubmitResult& decided = decision(i);
    if (atomic_ && !(decided.ok() && decided->ok())) {
      FailLinked(i);
      break;
    }
  }
  return Write();
}

absl::Status Ledger::BatchAttempt::ClaimKeys() {
  if (ledger_.skip_idempotency_) return absl::OkStatus();
  // Sorted and distinct; a key's first item in batch order names what it is to hold.
  std::map<ClaimOrder, const internal::BatchItem*> order;
  for (const internal::BatchItem* item : items_) {
    if (item->has_key) order.emplace(ClaimOrderOf(item->identity), item);
  }
  if (order.empty()) return absl::OkStatus();
  // Each key's record-to-be, fixed at the claim (StorageTransaction::ClaimKey): the
  // transaction id the key's committing item will take, and the TTL counted from the
  // claim's time, so an engine can write the final record with the claim.
  std::vector<KeyRecord> intended;
  std::vector<KeyIdentity> identities;
  for (const auto& [position, item] : order) {
    KeyRecord record{item->identity, item->fingerprint, NewTransactionId(state_.now), state_.now,
                     state_.now + item->request->claim.ttl};
    intended_.emplace(item->encoded_identity, record);
    identities.push_back(item->identity);
    intended.push_back(std::move(record));
  }

  std::vector<std::optional<KeyRecord>> claimed;
  if (claim_deadline_.has_value() || intended.size() == 1) {
    for (const KeyRecord& record_to_be : intended) {
      absl::StatusOr<std::optional<KeyRecord>> record = tx_->ClaimKey(record_to_be);
      if (!record.ok()) {
        if (IsInProgress(record.status())) busy_key_ = record_to_be.identity;
        claims_timed_out_ = IsInProgress(record.status());
        return record.status();
      }
      claimed.push_back(*std::move(record));
    }
  } else {
    absl::StatusOr<std::vector<std::optional<KeyRecord>>> records = tx_->ClaimKeys(intended);
    if (!records.ok()) {
      claims_timed_out_ = IsInProgress(records.status());
      return records.status();
    }
    claimed = *std::move(records);
  }
  LEDGER_CHECK(claimed.size() == identities.size())
      << "claimed " << identities.size() << " keys, got " << claimed.size() << " records";
  for (size_t k = 0; k < identities.size(); ++k) {
    // An expired record is as good as none: a commit replaces it.
    if (claimed[k].has_value() && !claimed[k]->ExpiredAt(state_.now)) {
      state_.records.emplace(identities[k].Encoded(), *std::move(claimed[k]));
    }
  }
  return absl::OkStatus();
}

// What LockAccounts computes for items without a record, on a copy of the state as it
// is before the claims, so the two cannot disagree when no item replays.
std::vector<std::string> Ledger::BatchAttempt::AccountsNamedUpFront() const {
  internal::AttemptState scratch = state_;
  internal::TargetReads reads;
  std::vector<std::string> ids;
  for (const internal::BatchItem* item : items_) {
    const Operation& op = item->request->operation;
    const ItemPlan& plan = internal::PlanFor(op.kind);
    plan.NameTargets(op, scratch, reads);
    if (!reads.transaction_ids.empty() || !reads.hold_ids.empty()) return {};
    const PlannedPostings postings = plan.Postings(op, scratch);
    if (const auto* planned = std::get_if<std::vector<Posting>>(&postings)) {
      plan.AppendAccounts(op, *planned, scratch, ids);
    }
  }
  posting_rules::SortDistinct(ids);
  return ids;
}

const KeyRecord* Ledger::BatchAttempt::IntendedOf(size_t i) const {
  const internal::BatchItem& item = *items_[i];
  if (!item.has_key) return nullptr;
  auto intended = intended_.find(item.encoded_identity);
  return intended == intended_.end() ? nullptr : &intended->second;
}

const KeyRecord* Ledger::BatchAttempt::RecordOf(size_t i) const {
  const internal::BatchItem& item = *items_[i];
  if (!item.has_key) return nullptr;
  auto record = state_.records.find(item.encoded_identity);
  return record == state_.records.end() ? nullptr : &record->second;
}

absl::Status Ledger::BatchAttempt::LoadTargets() {
  internal::TargetReads reads;
  std::vector<std::string> replayed_ids;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (const KeyRecord* record = RecordOf(i)) {
      if (ReturnsOriginal(*items_[i], *record) &&
          state_.replayed.emplace(record->transaction_id, std::nullopt).second) {
        replayed_ids.push_back(record->transaction_id);
      }
      continue;
    }
    const Operation& op = items_[i]->request->operation;
    internal::PlanFor(op.kind).NameTargets(op, state_, reads);
  }
  std::vector<std::string>& transaction_ids = reads.transaction_ids;
  transaction_ids.insert(transaction_ids.end(), replayed_ids.begin(), replayed_ids.end());
  if (!transaction_ids.empty()) {  // one read for all: one round trip on a server engine
    posting_rules::SortDistinct(transaction_ids);  // a replay may return a reversal's target
    if (OnlyReplays()) tx_->ExpectNoWrites();  // a resend then costs one round trip less
    LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> loaded, tx_->LoadTransactions(transaction_ids));
    for (Transaction& transaction : loaded) {
      if (auto target = state_.targets.find(transaction.id); target != state_.targets.end()) {
        target->second = transaction;
      }
      if (auto replayed = state_.replayed.find(transaction.id); replayed != state_.replayed.end()) {
        replayed->second = std::move(transaction);
      }
    }
  }
  return LoadHolds(reads.hold_ids);
}

bool Ledger::BatchAttempt::OnlyReplays() const {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (RecordOf(i) == nullptr) return false;  // claimed afresh (or keyless): it may write
  }
  return true;
}

bool Ledger::BatchAttempt::ReturnsOriginal(const internal::BatchItem& item,
                                           const KeyRecord& record) {
  return record.fingerprint == item.fingerprint &&
         item.request->claim.replay != ReplayPolicy::kError;
}

absl::Status Ledger::BatchAttempt::LoadHolds(const std::vector<std::string>& ids) {
  if (ids.empty()) return absl::OkStatus();
  LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> loaded, tx_->LoadHolds(ids));
  for (Hold& hold : loaded) {
    std::string id = hold.id;
    state_.holds[id] = std::move(hold);
  }
  return absl::OkStatus();
}

absl::Status Ledger::BatchAttempt::LockAccounts() {
  std::vector<std::string> ids;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (RecordOf(i) != nullptr) continue;  // replays lock nothing
    const Operation& op = items_[i]->request->operation;
    const ItemPlan& plan = internal::PlanFor(op.kind);
    postings_[i] = plan.Postings(op, state_);
    if (auto* postings = std::get_if<std::vector<Posting>>(&*postings_[i])) {
      plan.AppendAccounts(op, *postings, state_, ids);
    }
  }
  posting_rules::SortDistinct(ids);
  if (ids.empty()) return absl::OkStatus();
  // One lock order for every write, so two batches never deadlock each other.
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> locked, tx_->LockAccounts(ids));
  for (Account& account : locked) {
    if (account.pending_debits > 0) state_.held_from.insert(account.id);
    state_.accounts.emplace(account.id, std::move(account));
  }
  // Checked under the account locks: a concurrent reversal or settlement (each locks
  // the same accounts first) has committed or waits.
  for (const auto& [id, target] : state_.targets) {
    if (!target.has_value()) continue;
    LEDGER_ASSIGN_OR_RETURN(bool reversed, tx_->IsReversed(id));
    if (reversed) state_.reversed.insert(id);
  }
  std::vector<std::string> hold_ids;
  for (const auto& [id, hold] : state_.holds) {
    if (hold.has_value()) hold_ids.push_back(id);
  }
  return LoadHolds(hold_ids);
}

// The one sequence every item that is not a replay goes through; its family's plan
// (ledger/item_plans.h) fills in the steps.
absl::Status Ledger::BatchAttempt::Decide(size_t i) {
  const internal::BatchItem& item = *items_[i];
  if (const KeyRecord* record = RecordOf(i)) {
    Replay(i, *record);
    return absl::OkStatus();
  }
  // Set by LockAccounts for every item that was no replay then (records only grow).
  LEDGER_CHECK(postings_[i].has_value()) << "item " << i << " decided before it was planned";
  const Operation& op = item.request->operation;
  const ItemPlan& plan = internal::PlanFor(op.kind);
  if (Outcome* rejection = std::get_if<Outcome>(&*postings_[i])) {
    decisions_[i] = std::move(*rejection);
    return absl::OkStatus();
  }
  const std::vector<Posting>& postings = std::get<std::vector<Posting>>(*postings_[i]);
  if (std::optional<SubmitResult> checked = plan.Check(op, state_)) {
    decisions_[i] = *std::move(checked);
    return absl::OkStatus();
  }
  std::vector<Posting> used = plan.UsablePostings(op, postings);
  if (std::optional<Outcome> rejection = posting_rules::CheckAccountsUsable(used, state_.accounts)) {
    decisions_[i] = *std::move(rejection);
    return absl::OkStatus();
  }
  AccountsById touched;  // copies: the running state changes only if the item commits
  std::vector<Account> before;
  std::vector<std::string> ids;
  plan.AppendAccounts(op, used, state_, ids);
  posting_rules::SortDistinct(ids);
  for (const std::string& id : ids) {
    auto locked = state_.accounts.find(id);
    LEDGER_CHECK(locked != state_.accounts.end()) << "item " << i << " touches " << id
                                                  << ", which it did not lock";
    touched.emplace(id, locked->second);
    before.push_back(locked->second);
  }
  if (plan.ChecksAvailable(op)) {
    LEDGER_RETURN_IF_ERROR(state_.LoadLapsedDebits(*tx_, touched));
  }

  internal::ItemContext context{op, state_, *tx_, ledger_.options_.velocity_limits};
  LEDGER_ASSIGN_OR_RETURN(internal::Made made, plan.Make(context, postings, touched));
  if (Outcome* rejection = std::get_if<Outcome>(&made)) {
    decisions_[i] = std::move(*rejection);
    return absl::OkStatus();
  }
  Transaction transaction = std::get<Transaction>(std::move(made));
  // A key's id was minted at its claim (at most one item of a key commits: a later one
  // replays it); the hold sweep's expiries, without a key, mint theirs now.
  const KeyRecord* intended = IntendedOf(i);
  transaction.id = intended != nullptr ? intended->transaction_id : NewTransactionId(state_.now);
  transaction.kind = op.kind;
  transaction.created_at = state_.now;
  LEDGER_ASSIGN_OR_RETURN(transaction.metadata, CanonicalJson(op.metadata));
  transaction.fingerprint = item.fingerprint;
  std::vector<Account> updated;
  for (auto& [id, account] : touched) updated.push_back(account);

  if (ledger_.tamper_plan_) ledger_.tamper_plan_(transaction, updated);  // tests only
  if (absl::Status broken = CheckPostingInvariants(before, transaction.entries, updated);
      !broken.ok()) {
    decisions_[i] = broken;  // a bug, not a request to retry: nothing of it is written
    return absl::OkStatus();
  }
  Accept(i, plan, std::move(transaction), std::move(updated));
  return absl::OkStatus();
}

void Ledger::BatchAttempt::Replay(size_t i, const KeyRecord& record) {
  const internal::BatchItem& item = *items_[i];
  if (record.fingerprint != item.fingerprint) {
    decisions_[i] = ConflictError(absl::StrCat(
        "idempotency key \"", record.identity.key, "\" was already used with a different payload"));
    return;
  }
  if (item.request->claim.replay == ReplayPolicy::kError) {
    decisions_[i] = DuplicateError(absl::StrCat("idempotency key \"", record.identity.key,
                                                "\" already committed transaction ",
                                                record.transaction_id));
    return;
  }
  if (auto committing = state_.committing.find(record.transaction_id);
      committing != state_.committing.end()) {
    decisions_[i] = Outcome::Duplicate(state_.writes[committing->second].transaction);  // earlier in this batch
    rides_on_commit_[i] = true;
    return;
  }
  // Read by LoadTargets for every record the claims returned.
  auto original = state_.replayed.find(record.transaction_id);
  if (original == state_.replayed.end() || !original->second.has_value()) {
    decisions_[i] = Outcome::Faulted(absl::DataLossError(
        absl::StrCat("key record points at missing transaction ", record.transaction_id)));
  } else {
    decisions_[i] = Outcome::Duplicate(*original->second);
  }
}

void Ledger::BatchAttempt::Accept(size_t i, const ItemPlan& plan, Transaction transaction,
                                  std::vector<Account> updated) {
  const internal::BatchItem& item = *items_[i];
  plan.Commit(transaction, state_);
  std::optional<KeyRecord> record;
  if (item.has_key) {
    // Timed from the claim, as the claim was told (the TTL starts there, not under the
    // account locks): usually exactly the intended record, so the engine whose claim
    // wrote it sends nothing more.
    const KeyRecord* intended = IntendedOf(i);
    const absl::Time claimed_at = intended != nullptr ? intended->created_at : state_.now;
    record = KeyRecord{item.identity, item.fingerprint, transaction.id, claimed_at,
                       claimed_at + item.request->claim.ttl};
  }
  LEDGER_CHECK(!state_.committing.contains(transaction.id))
      << "item " << i << " commits transaction " << transaction.id << " a second time";
  decisions_[i] = Outcome::Committed(transaction);
  rides_on_commit_[i] = true;
  state_.Commit(std::move(transaction), std::move(updated), std::move(record),
                item.encoded_identity);
}

void Ledger::BatchAttempt::FailLinked(size_t failed) {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i == failed) continue;
    decisions_[i] = LinkedItemFailed(items_[failed]->index);
    rides_on_commit_[i] = false;
  }
  state_.writes.clear();
  state_.committing.clear();
}

absl::Status Ledger::BatchAttempt::Write() {
  for (const internal::PendingWrite& write : state_.writes) {
    LEDGER_RETURN_IF_ERROR(tx_->WriteTransaction(write.transaction, write.updated));
    if (write.record.has_value() && !ledger_.skip_idempotency_) {
      LEDGER_RETURN_IF_ERROR(tx_->RecordKey(*write.record));
    }
    // No payload: ListEvents renders it from the transaction row (OutboxEvent).
    LEDGER_RETURN_IF_ERROR(tx_->AppendEvent(
        OutboxEvent{0, write.transaction.id, kCommittedEventType, "", state_.now}));
  }
  return absl::OkStatus();
}

Outcome LinkedItemFailed(size_t failed_index) {
  return Outcome::Rejected(RejectionReason::kBatchItemFailed,
                           absl::StrCat("item ", failed_index,
                                        " of the atomic batch was not committed, so none is"));
}

}  // namespace ledger
