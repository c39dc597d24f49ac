#include "tests/property/model.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/operation.h"

namespace ledger::property {
namespace {

bool MovesBetweenTwoAccounts(OperationKind kind) {
  return kind != OperationKind::kPost && kind != OperationKind::kReverse;
}

// The input rules the generator breaks on purpose (and a few more), checked from the
// contract in operation.h rather than by calling ValidateOperation.
bool LooksValid(const Operation& op) {
  if (MovesBetweenTwoAccounts(op.kind)) {
    if (op.from.empty() || op.to.empty() || op.from == op.to || op.amount <= 0) return false;
    if (op.fee.has_value()) {
      if (op.fee->to == op.from || op.fee->amount <= 0 || op.fee->amount >= op.amount) return false;
    }
    return true;
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

// operation.h's table: which postings each kind makes.
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
  return {std::string(OperationKindName(request.operation.kind)), request.scope.Encoded(),
          request.key};
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

  std::vector<Posting> postings;
  std::optional<std::string> reversal_of;
  if (op.kind == OperationKind::kReverse) {
    auto target = transactions_.find(op.transaction_id);
    if (target == transactions_.end()) {
      return Rejected(prediction, RejectionReason::kTransactionNotFound);
    }
    if (target->second.reversal_of.has_value()) {
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
  if (auto reason = BuildEntries(postings, entries)) return Rejected(prediction, *reason);
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
// any entry below its account's floor.
std::optional<RejectionReason> LedgerModel::BuildEntries(const std::vector<Posting>& postings,
                                                         std::vector<Entry>& entries) const {
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
    if (entry.balance_after < accounts_.at(entry.account_id).account.BalanceFloor()) {
      return RejectionReason::kInsufficientFunds;
    }
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
  keys_[IdentityOf(request)] = ModelKey{prediction.fingerprint, transaction_id, ttl_start + ttl};
  transactions_[transaction_id] = std::move(transaction);
}

absl::Status LedgerModel::PredictClose(const std::string& account_id) const {
  auto it = accounts_.find(account_id);
  if (it == accounts_.end()) return absl::NotFoundError(account_id);
  if (it->second.account.balance != 0) return absl::FailedPreconditionError(account_id);
  return absl::OkStatus();
}

void LedgerModel::ApplyClose(const std::string& account_id) {
  accounts_.at(account_id).account.closed = true;
}

std::optional<std::string> LedgerModel::TransactionOf(const IdentityTuple& identity) const {
  auto it = keys_.find(identity);
  if (it == keys_.end()) return std::nullopt;
  return it->second.transaction_id;
}

std::string LedgerModel::CheckOwnInvariants() const {
  std::map<std::string, Amount> totals;
  for (const auto& [id, model] : accounts_) {
    const Account& account = model.account;
    totals[account.asset] += account.balance;
    if (account.balance < account.BalanceFloor()) {
      return absl::StrCat("model: ", id, " is below its floor");
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
