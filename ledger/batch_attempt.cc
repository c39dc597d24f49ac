#include "ledger/batch_attempt.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/invariants.h"
#include "ledger/json.h"
#include "ledger/unit_of_work_internal.h"

namespace ledger {
namespace {

using posting_rules::AccountsById;

constexpr char kCommittedEventType[] = "transaction.committed";

// The global claim order: (namespace, scope, key), byte-wise.
using ClaimOrder = std::tuple<std::string, std::string, std::string>;
ClaimOrder ClaimOrderOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

// What the account has debited since `since` as committed: its debit entries, and the
// holds out of it still reserving at `now` (when it had pending debits at all).
absl::StatusOr<DebitUsage> LoadUsage(StorageTransaction& tx, const std::string& account_id,
                                     absl::Time now, absl::Time since, bool has_holds) {
  LEDGER_ASSIGN_OR_RETURN(DebitUsage usage, tx.LoadDebitUsage(account_id, since));
  if (!has_holds) return usage;
  LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals holds, tx.LoadHoldTotals(account_id, now, since));
  usage.count += holds.reserving_since.count;
  usage.amount = posting_rules::SaturatingAdd(usage.amount, holds.reserving_since.amount);
  return usage;
}

}  // namespace

WaitPolicy LeastClaimWait(const std::vector<internal::BatchItem*>& items) {
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
      rides_on_commit_(items_.size(), false) {}

absl::Status Ledger::BatchAttempt::Run() {
  absl::Status status = RunSteps();
  if (!status.ok() && tx_ != nullptr) tx_->Rollback();
  return status;
}

absl::Status Ledger::BatchAttempt::RunSteps() {
  now_ = ledger_.clock_->Now();
  // One claim wait for the transaction: the least the items allow, and no further than
  // the deadline (real time, as the engines wait) once the batch's claims ran out of it.
  WaitPolicy wait = LeastClaimWait(items_);
  if (claim_deadline_.has_value()) {
    wait.wait_max = std::clamp(*claim_deadline_ - absl::Now(), absl::ZeroDuration(), wait.wait_max);
  }
  if (unit_of_work_ != nullptr) {
    tx_ = internal::JoinTransaction(*unit_of_work_);
  } else {
    LEDGER_ASSIGN_OR_RETURN(tx_, ledger_.engine_->Begin(BeginOptions{wait}));
  }
  LEDGER_RETURN_IF_ERROR(ClaimKeys());
  LEDGER_RETURN_IF_ERROR(LoadTargets());
  LEDGER_RETURN_IF_ERROR(LockAccounts());
  // Read again under the locks, so what depends on the time (has a hold lapsed?) is
  // ordered like the locks: a submit that waited for them cannot capture a hold that
  // the submit before it, holding them, saw lapse.
  now_ = std::max(now_, ledger_.clock_->Now());
  for (size_t i = 0; i < items_.size(); ++i) {
    LEDGER_RETURN_IF_ERROR(Decide(i));
    const SubmitResult& decided = decision(i);
    if (atomic_ && !(decided.ok() && decided->ok())) {
      FailLinked(i);
      break;
    }
  }
  return Finish();
}

absl::Status Ledger::BatchAttempt::ClaimKeys() {
  if (ledger_.skip_idempotency_) return absl::OkStatus();
  std::map<ClaimOrder, const KeyIdentity*> order;  // sorted and distinct
  for (const internal::BatchItem* item : items_) {
    order.emplace(ClaimOrderOf(item->identity), &item->identity);
  }
  std::vector<KeyIdentity> identities;
  for (const auto& [position, identity] : order) identities.push_back(*identity);

  std::vector<std::optional<KeyRecord>> claimed;
  if (claim_deadline_.has_value() || identities.size() == 1) {
    for (const KeyIdentity& identity : identities) {
      absl::StatusOr<std::optional<KeyRecord>> record = tx_->ClaimKey(identity);
      if (!record.ok()) {
        if (IsInProgress(record.status())) busy_key_ = identity;
        claims_timed_out_ = IsInProgress(record.status());
        return record.status();
      }
      claimed.push_back(*std::move(record));
    }
  } else {
    absl::StatusOr<std::vector<std::optional<KeyRecord>>> records = tx_->ClaimKeys(identities);
    if (!records.ok()) {
      claims_timed_out_ = IsInProgress(records.status());
      return records.status();
    }
    claimed = *std::move(records);
  }
  for (size_t k = 0; k < identities.size(); ++k) {
    // An expired record is as good as none: a commit replaces it.
    if (claimed[k].has_value() && !claimed[k]->ExpiredAt(now_)) {
      records_.emplace(identities[k].Encoded(), *std::move(claimed[k]));
    }
  }
  return absl::OkStatus();
}

absl::Status Ledger::BatchAttempt::LoadTargets() {
  std::vector<std::string> transaction_ids;  // distinct
  std::vector<std::string> hold_ids;
  for (const internal::BatchItem* item : items_) {
    const Operation& op = item->request->operation;
    if (auto record = records_.find(item->encoded_identity); record != records_.end()) {
      if (ReturnsOriginal(*item, record->second) &&
          replayed_.emplace(record->second.transaction_id, std::nullopt).second) {
        transaction_ids.push_back(record->second.transaction_id);
      }
      continue;
    }
    if (op.kind == OperationKind::kReverse &&
        targets_.emplace(op.transaction_id, std::nullopt).second) {
      transaction_ids.push_back(op.transaction_id);
    }
    if (!op.hold_id.empty() && holds_.emplace(op.hold_id, std::nullopt).second) {
      hold_ids.push_back(op.hold_id);
    }
  }
  if (!transaction_ids.empty()) {  // one read for all: one round trip on a server engine
    posting_rules::SortDistinct(transaction_ids);  // a replay may return a reversal's target
    LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> loaded, tx_->LoadTransactions(transaction_ids));
    for (Transaction& transaction : loaded) {
      if (auto target = targets_.find(transaction.id); target != targets_.end()) {
        target->second = transaction;
      }
      if (auto replayed = replayed_.find(transaction.id); replayed != replayed_.end()) {
        replayed->second = std::move(transaction);
      }
    }
  }
  return LoadHolds(hold_ids);
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
    holds_[id] = std::move(hold);
  }
  return absl::OkStatus();
}

absl::Status Ledger::BatchAttempt::LockAccounts() {
  std::vector<std::string> ids;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (records_.count(items_[i]->encoded_identity) > 0) continue;  // replays lock nothing
    postings_[i] = PostingsFor(i);
    if (auto* postings = std::get_if<std::vector<Posting>>(&*postings_[i])) {
      AppendAccountsOf(i, *postings, ids);
    }
  }
  posting_rules::SortDistinct(ids);
  if (ids.empty()) return absl::OkStatus();
  // One lock order for every submit, so two batches never deadlock each other.
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> locked, tx_->LockAccounts(ids));
  for (Account& account : locked) {
    if (account.pending_debits > 0) held_from_.insert(account.id);
    accounts_.emplace(account.id, std::move(account));
  }
  // Checked under the account locks: a concurrent reversal or settlement (each locks
  // the same accounts first) has committed or waits.
  for (const auto& [id, target] : targets_) {
    if (!target.has_value()) continue;
    LEDGER_ASSIGN_OR_RETURN(bool reversed, tx_->IsReversed(id));
    if (reversed) reversed_.insert(id);
  }
  std::vector<std::string> hold_ids;
  for (const auto& [id, hold] : holds_) {
    if (hold.has_value()) hold_ids.push_back(id);
  }
  return LoadHolds(hold_ids);
}

std::variant<Outcome, std::vector<Posting>> Ledger::BatchAttempt::PostingsFor(size_t i) const {
  const Operation& op = items_[i]->request->operation;
  if (op.kind == OperationKind::kCapture || op.kind == OperationKind::kVoid) {
    const std::optional<Hold>& hold = holds_.at(op.hold_id);
    if (!hold.has_value()) {
      return Outcome::Rejected(RejectionReason::kHoldNotFound, absl::StrCat("no hold ", op.hold_id));
    }
    if (op.kind == OperationKind::kVoid) return std::vector<Posting>{};
    return CapturePostings(hold->terms, op.capture_amount.value_or(hold->terms.amount));
  }
  if (op.kind != OperationKind::kReverse) return PostingsOf(op);
  const std::optional<Transaction>& target = targets_.at(op.transaction_id);
  if (!target.has_value()) {
    return Outcome::Rejected(RejectionReason::kTransactionNotFound,
                             absl::StrCat("no transaction ", op.transaction_id));
  }
  if (target->reversal_of.has_value() || target->entries.empty()) {
    return Outcome::Rejected(RejectionReason::kNotReversible,
                             target->entries.empty()
                                 ? absl::StrCat("a ", View(OperationKindName(target->kind)),
                                                " posted nothing to reverse")
                                 : "a reversal cannot itself be reversed");
  }
  return ReversalPostings(*target);
}

void Ledger::BatchAttempt::AppendAccountsOf(size_t i, const std::vector<Posting>& postings,
                                            std::vector<std::string>& ids) const {
  for (const Posting& posting : postings) ids.push_back(posting.account_id);
  const Operation& op = items_[i]->request->operation;
  if (op.kind == OperationKind::kHold) {
    ids.insert(ids.end(), {op.from, op.to});
  } else if (op.kind == OperationKind::kVoid) {
    auto hold = holds_.find(op.hold_id);
    LEDGER_CHECK(hold != holds_.end() && hold->second.has_value())
        << "void of hold " << op.hold_id << " planned before its hold was read";
    const HoldTerms& terms = hold->second->terms;
    ids.insert(ids.end(), {terms.from, terms.to});
  }
}

absl::Status Ledger::BatchAttempt::Decide(size_t i) {
  const internal::BatchItem& item = *items_[i];
  if (auto record = records_.find(item.encoded_identity); record != records_.end()) {
    return Replay(i, record->second);
  }
  const Operation& op = item.request->operation;
  // Set by LockAccounts: an item that is no replay now was none then (records_ only grow).
  std::variant<Outcome, std::vector<Posting>>& planned = *postings_[i];
  if (Outcome* rejection = std::get_if<Outcome>(&planned)) {
    decisions_[i] = std::move(*rejection);
    return absl::OkStatus();
  }
  const std::vector<Posting>& postings = std::get<std::vector<Posting>>(planned);
  if (op.kind == OperationKind::kReverse && reversed_.count(op.transaction_id) > 0) {
    decisions_[i] = Outcome::Rejected(RejectionReason::kAlreadyReversed,
                                      absl::StrCat(op.transaction_id, " was reversed before"));
    return absl::OkStatus();
  }
  if (!op.hold_id.empty()) {
    if (std::optional<Outcome> rejection =
            posting_rules::CheckHoldSettleable(op.hold_id, holds_.at(op.hold_id), now_)) {
      decisions_[i] = *std::move(rejection);
      return absl::OkStatus();
    }
  }
  if (op.kind == OperationKind::kHold && op.expires_at.has_value() && *op.expires_at <= now_) {
    decisions_[i] = absl::InvalidArgumentError(absl::StrCat(
        "expires_at ", FormatTimestamp(*op.expires_at), " is not in the future"));
    return absl::OkStatus();
  }
  // A hold posts nothing but must name usable accounts, like the transfer it reserves.
  std::vector<Posting> used = op.kind == OperationKind::kHold
                                  ? CapturePostings({op.from, op.to, op.asset, op.amount}, op.amount)
                                  : postings;
  if (std::optional<Outcome> rejection = posting_rules::CheckAccountsUsable(used, accounts_)) {
    decisions_[i] = *std::move(rejection);
    return absl::OkStatus();
  }
  AccountsById touched;  // copies: the running state changes only if the item commits
  std::vector<Account> before;
  std::vector<std::string> ids;
  AppendAccountsOf(i, used, ids);
  posting_rules::SortDistinct(ids);
  for (const std::string& id : ids) {
    touched.emplace(id, accounts_.at(id));
    before.push_back(accounts_.at(id));
  }
  LEDGER_RETURN_IF_ERROR(LoadLapsedDebits(touched));

  Made made;
  if (op.kind == OperationKind::kHold) {
    LEDGER_ASSIGN_OR_RETURN(made, MakeHold(i, touched));
  } else if (!op.hold_id.empty()) {
    made = MakeSettlement(i, postings, touched);
  } else {
    LEDGER_ASSIGN_OR_RETURN(made, MakePosting(i, postings, touched));
  }
  if (Outcome* rejection = std::get_if<Outcome>(&made)) {
    decisions_[i] = std::move(*rejection);
    return absl::OkStatus();
  }
  Transaction transaction = std::get<Transaction>(std::move(made));
  transaction.id = NewTransactionId(now_);
  transaction.kind = op.kind;
  transaction.created_at = now_;
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
  Accept(i, std::move(transaction), std::move(updated));
  return absl::OkStatus();
}

absl::StatusOr<Ledger::BatchAttempt::Made> Ledger::BatchAttempt::MakePosting(
    size_t i, const std::vector<Posting>& postings, AccountsById& touched) {
  const Operation& op = items_[i]->request->operation;
  auto built = posting_rules::BuildEntries(postings, touched, lapsed_);
  if (Outcome* rejection = std::get_if<Outcome>(&built)) return std::move(*rejection);
  if (op.kind != OperationKind::kReverse) {  // reversals correct, they do not spend
    LEDGER_ASSIGN_OR_RETURN(std::optional<Outcome> rejection, CheckVelocity(postings, touched));
    if (rejection.has_value()) return *std::move(rejection);
  }
  Transaction transaction;
  if (op.kind == OperationKind::kReverse) transaction.reversal_of = op.transaction_id;
  transaction.entries = std::get<std::vector<Entry>>(std::move(built));
  return transaction;
}

absl::StatusOr<Ledger::BatchAttempt::Made> Ledger::BatchAttempt::MakeHold(size_t i,
                                                                         AccountsById& touched) {
  const Operation& op = items_[i]->request->operation;
  HoldTerms terms{op.from, op.to, op.asset, op.amount, op.expires_at};
  if (op.timeout.has_value()) terms.expires_at = now_ + *op.timeout;
  if (std::optional<Outcome> rejection = posting_rules::Reserve(terms, touched, lapsed_)) {
    return *std::move(rejection);
  }
  // Velocity counts a hold as the debit it reserves (its capture is not checked again).
  LEDGER_ASSIGN_OR_RETURN(std::optional<Outcome> rejection,
                          CheckVelocity({{op.from, op.asset, -op.amount}}, touched));
  if (rejection.has_value()) return *std::move(rejection);
  Transaction transaction;
  transaction.hold = std::move(terms);
  return transaction;
}

Ledger::BatchAttempt::Made Ledger::BatchAttempt::MakeSettlement(
    size_t i, const std::vector<Posting>& postings, AccountsById& touched) {
  const Operation& op = items_[i]->request->operation;
  const Hold& hold = *holds_.at(op.hold_id);  // CheckHoldSettleable found it pending
  if (op.capture_amount.value_or(0) > hold.terms.amount) {
    return Outcome::Rejected(RejectionReason::kCaptureExceedsHold,
                             absl::StrCat("capture of ", *op.capture_amount, " from hold ",
                                          hold.id, " of ", hold.terms.amount));
  }
  posting_rules::Release(hold.terms, touched);
  Transaction transaction;
  transaction.hold_id = hold.id;
  if (postings.empty()) return transaction;  // a void
  // The release covers the captured amount, so the capture cannot go below a floor.
  auto built = posting_rules::BuildEntries(postings, touched, lapsed_);
  if (Outcome* rejection = std::get_if<Outcome>(&built)) return std::move(*rejection);
  transaction.entries = std::get<std::vector<Entry>>(std::move(built));
  return transaction;
}

absl::Status Ledger::BatchAttempt::LoadLapsedDebits(const AccountsById& touched) {
  for (const auto& [id, account] : touched) {
    if (held_from_.count(id) == 0 || account.allow_negative) continue;  // nothing to check
    if (!lapsed_loaded_.insert(id).second) continue;
    LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals totals, tx_->LoadHoldTotals(id, now_, now_));
    if (totals.lapsed_debits > 0) lapsed_[id] = totals.lapsed_debits;
  }
  return absl::OkStatus();
}

absl::Status Ledger::BatchAttempt::Replay(size_t i, const KeyRecord& record) {
  const internal::BatchItem& item = *items_[i];
  if (record.fingerprint != item.fingerprint) {
    decisions_[i] = ConflictError(absl::StrCat(
        "idempotency key \"", record.identity.key, "\" was already used with a different payload"));
    return absl::OkStatus();
  }
  if (item.request->claim.replay == ReplayPolicy::kError) {
    decisions_[i] = DuplicateError(absl::StrCat("idempotency key \"", record.identity.key,
                                                "\" already committed transaction ",
                                                record.transaction_id));
    return absl::OkStatus();
  }
  if (auto committing = committing_.find(record.transaction_id); committing != committing_.end()) {
    decisions_[i] = Outcome::Duplicate(plans_[committing->second].transaction);  // earlier in this batch
    rides_on_commit_[i] = true;
    return absl::OkStatus();
  }
  // Read by LoadTargets for every record the claims returned.
  auto original = replayed_.find(record.transaction_id);
  if (original == replayed_.end() || !original->second.has_value()) {
    decisions_[i] = Outcome::Faulted(absl::DataLossError(
        absl::StrCat("key record points at missing transaction ", record.transaction_id)));
  } else {
    decisions_[i] = Outcome::Duplicate(*original->second);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Outcome>> Ledger::BatchAttempt::CheckVelocity(
    const std::vector<Posting>& postings, const AccountsById& accounts) {
  const std::vector<VelocityLimit>& limits = ledger_.options_.velocity_limits;
  if (limits.empty()) return std::nullopt;
  std::map<std::string, DebitUsage> debits;  // this operation's own debits
  for (const Posting& posting : postings) {
    if (posting.amount >= 0 || accounts.at(posting.account_id).allow_negative) continue;
    DebitUsage& totals = debits[posting.account_id];
    totals.count += 1;
    totals.amount = posting_rules::SaturatingAdd(totals.amount, -posting.amount);
  }
  std::optional<Outcome> amount_rejection;  // reported only if no count limit is hit
  for (const VelocityLimit& limit : limits) {
    for (const auto& [account_id, own] : debits) {
      LEDGER_ASSIGN_OR_RETURN(DebitUsage usage, UsageSince(account_id, limit.window));
      int64_t count = usage.count + own.count;
      Amount amount = posting_rules::SaturatingAdd(usage.amount, own.amount);
      std::string window = absl::FormatDuration(limit.window);
      if (limit.debit_count_max > 0 && count > limit.debit_count_max) {
        return Outcome::Rejected(
            RejectionReason::kVelocityCountExceeded,
            absl::StrCat("account ", account_id, " would make ", count, " debits in ", window,
                         "; the limit is ", limit.debit_count_max));
      }
      if (limit.debit_amount_max > 0 && amount > limit.debit_amount_max &&
          !amount_rejection.has_value()) {
        amount_rejection = Outcome::Rejected(
            RejectionReason::kVelocityAmountExceeded,
            absl::StrCat("account ", account_id, " would debit ", amount, " in ", window,
                         "; the limit is ", limit.debit_amount_max));
      }
    }
  }
  return amount_rejection;
}

absl::StatusOr<DebitUsage> Ledger::BatchAttempt::UsageSince(const std::string& account_id,
                                                            absl::Duration window) {
  auto [stored, inserted] = stored_usage_.try_emplace({account_id, window});
  if (inserted) {
    absl::StatusOr<DebitUsage> loaded = LoadUsage(*tx_, account_id, now_, now_ - window,
                                                  held_from_.count(account_id) > 0);
    if (!loaded.ok()) {
      stored_usage_.erase(stored);
      return loaded.status();
    }
    stored->second = *loaded;
  }
  // The holds this attempt settles still count in the database's usage; their captures'
  // entries count as this attempt's own debits.
  DebitUsage usage = stored->second;
  for (const Hold& hold : settled_) {
    if (hold.terms.from != account_id || hold.created_at < now_ - window) continue;
    usage.count -= 1;
    usage.amount -= hold.terms.amount;
  }
  // This attempt's own debits all carry now_, inside every window.
  const DebitUsage& own = own_debits_[account_id];
  usage.count += own.count;
  usage.amount = posting_rules::SaturatingAdd(usage.amount, own.amount);
  return usage;
}

void Ledger::BatchAttempt::Accept(size_t i, Transaction transaction,
                                  std::vector<Account> updated) {
  const internal::BatchItem& item = *items_[i];
  for (const Account& account : updated) accounts_[account.id] = account;
  std::vector<std::pair<std::string, Amount>> debits;  // counted as LoadUsage counts them
  for (const Entry& entry : transaction.entries) {
    if (entry.amount < 0) debits.emplace_back(entry.account_id, -entry.amount);
  }
  if (transaction.hold.has_value()) debits.emplace_back(transaction.hold->from, transaction.hold->amount);
  for (const auto& [account_id, amount] : debits) {
    DebitUsage& own = own_debits_[account_id];
    own.count += 1;
    own.amount = posting_rules::SaturatingAdd(own.amount, amount);
  }
  if (transaction.reversal_of.has_value()) reversed_.insert(*transaction.reversal_of);
  if (transaction.hold_id.has_value()) {  // settled: later items see it so
    Hold& hold = *holds_.at(*transaction.hold_id);
    if (held_from_.count(hold.terms.from) > 0) settled_.push_back(hold);
    hold.status = transaction.kind == OperationKind::kCapture ? HoldStatus::kCaptured
                                                                : HoldStatus::kVoided;
    hold.settled_by = transaction.id;
  }
  KeyRecord record{item.identity, item.fingerprint, transaction.id, now_,
                   now_ + item.request->claim.ttl};
  records_[item.encoded_identity] = record;
  committing_.emplace(transaction.id, plans_.size());
  decisions_[i] = Outcome::Committed(transaction);
  rides_on_commit_[i] = true;
  plans_.push_back(Plan{std::move(transaction), std::move(updated), std::move(record)});
}

void Ledger::BatchAttempt::FailLinked(size_t failed) {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i == failed) continue;
    decisions_[i] = LinkedItemFailed(items_[failed]->index);
    rides_on_commit_[i] = false;
  }
  plans_.clear();
}

absl::Status Ledger::BatchAttempt::Finish() {
  if (plans_.empty()) {
    tx_->Rollback();  // nothing to write: replays and rejections leave their keys as they were
    return absl::OkStatus();
  }
  for (const Plan& plan : plans_) {
    LEDGER_RETURN_IF_ERROR(tx_->WriteTransaction(plan.transaction, plan.updated));
    if (!ledger_.skip_idempotency_) LEDGER_RETURN_IF_ERROR(tx_->RecordKey(plan.record));
    LEDGER_RETURN_IF_ERROR(tx_->AppendEvent(OutboxEvent{
        0, plan.transaction.id, kCommittedEventType,
        TransactionToJson(plan.transaction).dump(), now_}));
  }
  return tx_->Commit();
}

Outcome LinkedItemFailed(size_t failed_index) {
  return Outcome::Rejected(RejectionReason::kBatchItemFailed,
                           absl::StrCat("item ", failed_index,
                                        " of the atomic batch was not committed, so none is"));
}

}  // namespace ledger
