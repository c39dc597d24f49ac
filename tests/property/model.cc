#include "tests/property/model.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/json.h"
#include "ledger/operation.h"

namespace ledger::property {
namespace {

constexpr size_t kTransactionReferenceBytesMax = 64;

bool SettlesAHold(OperationKind kind) {
  return kind == OperationKind::kCapture || kind == OperationKind::kVoid;
}

// The moves and a hold: from, to, asset, amount.
bool NamesTwoAccounts(OperationKind kind) {
  return kind != OperationKind::kPost && kind != OperationKind::kReverse && !SettlesAHold(kind);
}

bool LooksLikeReference(const std::string& id) {
  if (id.empty() || id.size() > kTransactionReferenceBytesMax) return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c <= 0x7e; });
}

bool HoldExpiryLooksValid(const Operation& op) {
  if (op.expires_at.has_value() && op.timeout.has_value()) return false;
  if (!op.timeout.has_value()) return true;
  return *op.timeout >= absl::Seconds(1) && *op.timeout <= kHoldTimeoutMax &&
         *op.timeout == absl::Trunc(*op.timeout, absl::Seconds(1));
}

// The input rules the generator breaks on purpose (and a few more), checked from the
// contract in operation.h rather than by calling ValidateOperation.
bool LooksValid(const Operation& op) {
  if (SettlesAHold(op.kind)) {
    return LooksLikeReference(op.hold_id) &&
           (!op.capture_amount.has_value() || *op.capture_amount > 0);
  }
  if (NamesTwoAccounts(op.kind)) {
    if (op.from.empty() || op.to.empty() || op.from == op.to || op.amount <= 0) return false;
    if (op.fee.has_value()) {
      if (op.fee->to == op.from || op.fee->amount <= 0 || op.fee->amount >= op.amount) return false;
    }
    return op.kind != OperationKind::kHold || HoldExpiryLooksValid(op);
  }
  if (op.kind == OperationKind::kReverse) return !op.transaction_id.empty();
  if (op.postings.size() < 2) return false;
  std::map<std::string, Amount> sums;
  for (const Posting& posting : op.postings) {
    if (posting.amount == 0) return false;
    sums[posting.asset] += posting.amount;  // the generator's amounts are small
  }
  for (const auto& [asset, sum] : sums) {
    if (sum != 0) return false;
  }
  return true;
}

// operation.h's table: which postings each kind makes (a hold: those it reserves for).
std::vector<Posting> PostingsFor(const Operation& op) {
  if (op.kind == OperationKind::kPost) return op.postings;
  if (op.kind == OperationKind::kSpend && op.fee.has_value()) {
    return {{op.from, op.asset, -op.amount},
            {op.to, op.asset, op.amount - op.fee->amount},
            {op.fee->to, op.asset, op.fee->amount}};
  }
  return {{op.from, op.asset, -op.amount}, {op.to, op.asset, op.amount}};
}

Prediction Rejected(Prediction prediction, RejectionReason reason) {
  prediction.kind = Expected::kRejected;
  prediction.reason = reason;
  return prediction;
}

}  // namespace

IdentityTuple IdentityOf(const SubmitRequest& request) {
  return IdentityOf(KeyIdentityOf(request));
}

IdentityTuple IdentityOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

std::string IdentityText(const IdentityTuple& identity) {
  return absl::StrCat(std::get<0>(identity), "|", std::get<1>(identity), "|",
                      std::get<2>(identity));
}

std::string DescribePrediction(const Prediction& prediction) {
  switch (prediction.kind) {
    case Expected::kInvalid:
      return "invalid input (InvalidArgument)";
    case Expected::kConflict:
      return "conflict";
    case Expected::kDuplicate:
      return absl::StrCat("duplicate of ", prediction.transaction.id);
    case Expected::kRejected:
      return absl::StrCat("rejected (", View(RejectionReasonName(prediction.reason)), ")");
    case Expected::kCommitted:
      return absl::StrCat("committed ", TransactionToJson(prediction.transaction).dump());
  }
  return "?";
}

void LedgerModel::AddAccount(const Account& account) {
  accounts_[account.id] = ModelAccount{account, {}};
  entry_sums_[account.id] = 0;
}

std::vector<const Hold*> LedgerModel::PendingHoldsOf(const std::string& account_id) const {
  std::vector<const Hold*> pending;
  auto it = pending_by_account_.find(account_id);
  if (it == pending_by_account_.end()) return pending;
  for (const std::string& id : it->second) pending.push_back(&holds_.at(id));
  return pending;
}

Amount LedgerModel::LapsedDebits(const std::string& account_id, absl::Time now) const {
  Amount lapsed = 0;
  for (const Hold* hold : PendingHoldsOf(account_id)) {
    if (hold->terms.from == account_id && hold->LapsedAt(now)) lapsed += hold->terms.amount;
  }
  return lapsed;
}

Amount LedgerModel::LapsedCredits(const std::string& account_id, absl::Time now) const {
  Amount lapsed = 0;
  for (const Hold* hold : PendingHoldsOf(account_id)) {
    if (hold->terms.to == account_id && hold->LapsedAt(now)) lapsed += hold->terms.amount;
  }
  return lapsed;
}

Amount LedgerModel::AvailableAt(const Account& account, Amount balance, absl::Time now,
                                Amount released) const {
  Account reserving = account;
  reserving.balance = balance;
  reserving.pending_debits = account.pending_debits - LapsedDebits(account.id, now) - released;
  return reserving.Available();
}

Account LedgerModel::AccountAsOf(const std::string& account_id, absl::Time now) const {
  Account account = accounts_.at(account_id).account;
  account.pending_debits -= LapsedDebits(account_id, now);
  account.pending_credits -= LapsedCredits(account_id, now);
  return account;
}

Hold LedgerModel::HoldAsOf(const std::string& hold_id, absl::Time now) const {
  Hold hold = holds_.at(hold_id);
  if (hold.LapsedAt(now)) hold.status = HoldStatus::kExpired;
  return hold;
}

Prediction LedgerModel::Predict(const SubmitRequest& request, absl::Time now) const {
  Prediction prediction;
  const Operation& op = request.operation;
  if (!LooksValid(op)) return prediction;
  prediction.fingerprint = Fingerprint(OperationPayload(op)).value();
  prediction.reach = Reach::kClaim;
  auto key = keys_.find(IdentityOf(request));
  if (key != keys_.end() && key->second.expires_at > now) {
    if (key->second.fingerprint != prediction.fingerprint) {
      prediction.kind = Expected::kConflict;
      return prediction;
    }
    prediction.kind = Expected::kDuplicate;
    prediction.transaction = transactions_.at(key->second.transaction_id);
    return prediction;
  }

  if (op.kind == OperationKind::kHold) return PredictHold(std::move(prediction), op, now);
  if (SettlesAHold(op.kind)) return PredictSettlement(std::move(prediction), op, now);
  std::vector<Posting> postings;
  std::optional<std::string> reversal_of;
  if (op.kind == OperationKind::kReverse) {
    auto target = transactions_.find(op.transaction_id);
    if (target == transactions_.end()) {
      return Rejected(prediction, RejectionReason::kTransactionNotFound);
    }
    // A reversal, and a hold, void or expire (they posted nothing), cannot be reversed.
    if (target->second.reversal_of.has_value() || target->second.entries.empty()) {
      return Rejected(prediction, RejectionReason::kNotReversible);
    }
    for (const Entry& entry : target->second.entries) {
      postings.push_back({entry.account_id, entry.asset, -entry.amount});
    }
    reversal_of = target->first;
    prediction.reach = Reach::kLock;
    if (reversed_.count(target->first) > 0) {
      return Rejected(prediction, RejectionReason::kAlreadyReversed);
    }
  } else {
    postings = PostingsFor(op);
    prediction.reach = Reach::kLock;
  }
  if (auto reason = CheckAccounts(postings)) return Rejected(prediction, *reason);
  std::vector<Entry> entries;
  if (auto reason = BuildEntries(postings, entries, now, {})) return Rejected(prediction, *reason);
  if (!reversal_of.has_value()) {
    if (auto reason = CheckVelocity(postings, now)) return Rejected(prediction, *reason);
  }

  prediction.kind = Expected::kCommitted;
  prediction.reach = Reach::kCommit;
  Transaction& transaction = prediction.transaction;
  transaction.kind = op.kind;
  transaction.created_at = now;
  transaction.metadata = CanonicalJson(op.metadata).value();
  transaction.reversal_of = reversal_of;
  transaction.fingerprint = prediction.fingerprint;
  transaction.entries = std::move(entries);
  return prediction;
}

// A hold: its expires_at still ahead (bad input otherwise, found only at commit), usable
// accounts, the amount reservable out of the source's available balance, velocity
// counting the hold as the debit it reserves.
Prediction LedgerModel::PredictHold(Prediction prediction, const Operation& op,
                                    absl::Time now) const {
  prediction.reach = Reach::kLock;
  if (op.expires_at.has_value() && *op.expires_at <= now) {
    prediction.kind = Expected::kInvalid;
    return prediction;
  }
  std::vector<Posting> postings = PostingsFor(op);
  if (auto reason = CheckAccounts(postings)) return Rejected(prediction, *reason);
  const Account& from = accounts_.at(op.from).account;
  const Account& to = accounts_.at(op.to).account;
  if (!CheckedAdd(from.pending_debits, op.amount).has_value() ||
      !CheckedAdd(to.pending_credits, op.amount).has_value()) {
    return Rejected(prediction, RejectionReason::kBalanceOverflow);
  }
  if (AvailableAt(from, from.balance, now, -op.amount) < from.BalanceFloor()) {
    return Rejected(prediction, RejectionReason::kInsufficientFunds);
  }
  if (auto reason = CheckVelocity({postings.front()}, now)) return Rejected(prediction, *reason);

  prediction.kind = Expected::kCommitted;
  prediction.reach = Reach::kCommit;
  Transaction& transaction = prediction.transaction;
  transaction.kind = OperationKind::kHold;
  transaction.created_at = now;
  transaction.metadata = CanonicalJson(op.metadata).value();
  transaction.fingerprint = prediction.fingerprint;
  transaction.hold = HoldTerms{op.from, op.to, op.asset, op.amount, op.expires_at};
  if (op.timeout.has_value()) transaction.hold->expires_at = now + *op.timeout;
  return prediction;
}

// A capture or void: the hold exists (else nothing is locked), is not settled and has
// not lapsed; a capture takes at most the held amount and posts it from the source to
// the target, the hold's release covering the debit.
Prediction LedgerModel::PredictSettlement(Prediction prediction, const Operation& op,
                                          absl::Time now) const {
  auto found = holds_.find(op.hold_id);
  if (found == holds_.end()) return Rejected(prediction, RejectionReason::kHoldNotFound);
  prediction.reach = Reach::kLock;
  const Hold& hold = found->second;
  switch (hold.status) {
    case HoldStatus::kCaptured:
      return Rejected(prediction, RejectionReason::kHoldCaptured);
    case HoldStatus::kVoided:
      return Rejected(prediction, RejectionReason::kHoldVoided);
    case HoldStatus::kExpired:
      return Rejected(prediction, RejectionReason::kHoldExpired);
    case HoldStatus::kPending:
      break;
  }
  if (hold.LapsedAt(now)) return Rejected(prediction, RejectionReason::kHoldExpired);
  std::vector<Posting> postings;
  if (op.kind == OperationKind::kCapture) {
    Amount amount = op.capture_amount.value_or(hold.terms.amount);
    postings = {{hold.terms.from, hold.terms.asset, -amount},
                {hold.terms.to, hold.terms.asset, amount}};
  }
  if (auto reason = CheckAccounts(postings)) return Rejected(prediction, *reason);
  if (op.capture_amount.value_or(0) > hold.terms.amount) {
    return Rejected(prediction, RejectionReason::kCaptureExceedsHold);
  }
  std::vector<Entry> entries;
  if (auto reason = BuildEntries(postings, entries, now, {{hold.terms.from, hold.terms.amount}})) {
    return Rejected(prediction, *reason);
  }
  prediction.kind = Expected::kCommitted;
  prediction.reach = Reach::kCommit;
  Transaction& transaction = prediction.transaction;
  transaction.kind = op.kind;
  transaction.created_at = now;
  transaction.metadata = CanonicalJson(op.metadata).value();
  transaction.fingerprint = prediction.fingerprint;
  transaction.hold_id = hold.id;
  transaction.entries = std::move(entries);
  return prediction;
}

// outcome.h's precedence: every posting's account exists, then none is closed, then
// every asset matches.
std::optional<RejectionReason> LedgerModel::CheckAccounts(
    const std::vector<Posting>& postings) const {
  for (const Posting& posting : postings) {
    if (accounts_.count(posting.account_id) == 0) return RejectionReason::kAccountNotFound;
  }
  for (const Posting& posting : postings) {
    if (accounts_.at(posting.account_id).account.closed) return RejectionReason::kAccountClosed;
  }
  for (const Posting& posting : postings) {
    if (accounts_.at(posting.account_id).account.asset != posting.asset) {
      return RejectionReason::kAssetMismatch;
    }
  }
  return std::nullopt;
}

// Entries in posting order with running balances and versions; overflow first, then
// any entry leaving its account's available balance (at `now`) below its floor.
std::optional<RejectionReason> LedgerModel::BuildEntries(
    const std::vector<Posting>& postings, std::vector<Entry>& entries, absl::Time now,
    const std::map<std::string, Amount>& released) const {
  std::map<std::string, std::pair<Amount, int64_t>> running;  // balance, version
  for (const Posting& posting : postings) {
    const Account& account = accounts_.at(posting.account_id).account;
    auto it = running.try_emplace(account.id, account.balance, account.version).first;
    std::optional<Amount> balance = CheckedAdd(it->second.first, posting.amount);
    if (!balance.has_value()) return RejectionReason::kBalanceOverflow;
    it->second = {*balance, it->second.second + 1};
    entries.push_back({account.id, posting.asset, posting.amount, *balance, it->second.second});
  }
  for (const Entry& entry : entries) {
    const Account& account = accounts_.at(entry.account_id).account;
    auto release = released.find(entry.account_id);
    Amount available = AvailableAt(account, entry.balance_after, now,
                                   release == released.end() ? 0 : release->second);
    if (available < account.BalanceFloor()) return RejectionReason::kInsufficientFunds;
  }
  return std::nullopt;
}

// Count limits take precedence over amount limits across every limit and account.
std::optional<RejectionReason> LedgerModel::CheckVelocity(const std::vector<Posting>& postings,
                                                          absl::Time now) const {
  std::map<std::string, std::pair<int64_t, Amount>> own;  // this submit's debits
  for (const Posting& posting : postings) {
    if (posting.amount >= 0 || accounts_.at(posting.account_id).account.allow_negative) continue;
    own[posting.account_id].first += 1;
    own[posting.account_id].second += -posting.amount;
  }
  bool amount_exceeded = false;
  for (const VelocityLimit& limit : velocity_limits_) {
    for (const auto& [account_id, mine] : own) {
      int64_t count = mine.first;
      Amount amount = mine.second;
      for (const auto& [created_at, debit] : accounts_.at(account_id).debits) {
        if (created_at < now - limit.window) continue;
        count += 1;
        amount += -debit;
      }
      // A hold counts as the debit it reserves while it reserves.
      for (const Hold* hold : PendingHoldsOf(account_id)) {
        if (hold->terms.from != account_id || !hold->ReservesAt(now) ||
            hold->created_at < now - limit.window) {
          continue;
        }
        count += 1;
        amount += hold->terms.amount;
      }
      if (limit.debit_count_max > 0 && count > limit.debit_count_max) {
        return RejectionReason::kVelocityCountExceeded;
      }
      if (limit.debit_amount_max > 0 && amount > limit.debit_amount_max) amount_exceeded = true;
    }
  }
  if (amount_exceeded) return RejectionReason::kVelocityAmountExceeded;
  return std::nullopt;
}

void LedgerModel::ApplyCommit(const SubmitRequest& request, const Prediction& prediction,
                              const std::string& transaction_id, absl::Time ttl_start,
                              absl::Duration ttl) {
  Transaction transaction = prediction.transaction;
  transaction.id = transaction_id;
  for (const Entry& entry : transaction.entries) {
    ModelAccount& model = accounts_.at(entry.account_id);
    model.account.balance = entry.balance_after;
    model.account.version = entry.account_version;
    if (entry.amount < 0) model.debits.push_back({transaction.created_at, entry.amount});
    entry_sums_[entry.account_id] += entry.amount;
  }
  if (transaction.reversal_of.has_value()) reversed_.insert(*transaction.reversal_of);
  if (transaction.hold.has_value()) {
    const HoldTerms& terms = *transaction.hold;
    accounts_.at(terms.from).account.pending_debits += terms.amount;
    accounts_.at(terms.to).account.pending_credits += terms.amount;
    holds_[transaction_id] = Hold{transaction_id, terms, transaction.created_at,
                                  HoldStatus::kPending, std::nullopt};
    pending_by_account_[terms.from].insert(transaction_id);
    pending_by_account_[terms.to].insert(transaction_id);
  }
  if (transaction.hold_id.has_value()) {
    Hold& hold = holds_.at(*transaction.hold_id);
    Release(hold);
    hold.status = transaction.kind == OperationKind::kCapture ? HoldStatus::kCaptured
                                                              : HoldStatus::kVoided;
    hold.settled_by = transaction_id;
  }
  keys_[IdentityOf(request)] = ModelKey{prediction.fingerprint, transaction_id, ttl_start + ttl};
  transactions_[transaction_id] = std::move(transaction);
}

void LedgerModel::Release(const Hold& hold) {
  accounts_.at(hold.terms.from).account.pending_debits -= hold.terms.amount;
  accounts_.at(hold.terms.to).account.pending_credits -= hold.terms.amount;
  pending_by_account_[hold.terms.from].erase(hold.id);
  pending_by_account_[hold.terms.to].erase(hold.id);
}

std::vector<std::string> LedgerModel::LapsedHoldIds(absl::Time now) const {
  std::vector<const Hold*> lapsed;
  for (const auto& [id, hold] : holds_) {
    if (hold.LapsedAt(now)) lapsed.push_back(&hold);
  }
  std::sort(lapsed.begin(), lapsed.end(), [](const Hold* a, const Hold* b) {
    return std::tie(*a->terms.expires_at, a->id) < std::tie(*b->terms.expires_at, b->id);
  });
  std::vector<std::string> ids;
  for (const Hold* hold : lapsed) ids.push_back(hold->id);
  return ids;
}

Transaction LedgerModel::PredictExpiry(const std::string& hold_id, absl::Time now) const {
  Transaction transaction;
  transaction.kind = OperationKind::kExpire;
  transaction.created_at = now;
  transaction.hold_id = hold_id;
  return transaction;
}

void LedgerModel::ApplyExpiry(const std::string& hold_id, const std::string& transaction_id,
                              absl::Time now) {
  Hold& hold = holds_.at(hold_id);
  Release(hold);
  hold.status = HoldStatus::kExpired;
  hold.settled_by = transaction_id;
  Transaction transaction = PredictExpiry(hold_id, now);
  transaction.id = transaction_id;
  transactions_[transaction_id] = std::move(transaction);
}

absl::Status LedgerModel::PredictClose(const std::string& account_id, absl::Time now) const {
  auto it = accounts_.find(account_id);
  if (it == accounts_.end()) return absl::NotFoundError(account_id);
  if (it->second.account.balance != 0) return absl::FailedPreconditionError(account_id);
  Account reserving = AccountAsOf(account_id, now);
  if (reserving.pending_debits != 0 || reserving.pending_credits != 0) {
    return absl::FailedPreconditionError(absl::StrCat(account_id, " has pending holds"));
  }
  return absl::OkStatus();
}

bool LedgerModel::CloseSweeps(const std::string& account_id) const {
  const Account& account = accounts_.at(account_id).account;
  return account.pending_debits != 0 || account.pending_credits != 0;
}

void LedgerModel::ApplyClose(const std::string& account_id) {
  accounts_.at(account_id).account.closed = true;
}

std::optional<std::string> LedgerModel::TransactionOf(const IdentityTuple& identity) const {
  auto it = keys_.find(identity);
  if (it == keys_.end()) return std::nullopt;
  return it->second.transaction_id;
}

std::string LedgerModel::CheckOwnInvariants(absl::Time now) const {
  std::map<std::string, std::pair<Amount, Amount>> pending;  // debits, credits
  for (const auto& [id, hold] : holds_) {
    if (hold.status != HoldStatus::kPending) continue;
    pending[hold.terms.from].first += hold.terms.amount;
    pending[hold.terms.to].second += hold.terms.amount;
  }
  std::map<std::string, Amount> totals;
  for (const auto& [id, model] : accounts_) {
    const Account& account = model.account;
    totals[account.asset] += account.balance;
    if (account.balance < account.BalanceFloor() ||
        AvailableAt(account, account.balance, now, 0) < account.BalanceFloor()) {
      return absl::StrCat("model: ", id, " is below its floor");
    }
    if (std::make_pair(account.pending_debits, account.pending_credits) != pending[id]) {
      return absl::StrCat("model: ", id, "'s pending amounts are not its pending holds'");
    }
    if (account.balance != entry_sums_.at(id)) {
      return absl::StrCat("model: ", id, "'s balance is not the sum of its entries");
    }
  }
  for (const auto& [asset, total] : totals) {
    if (total != 0) return absl::StrCat("model: ", asset, " balances sum to ", total);
  }
  return "";
}

}  // namespace ledger::property
