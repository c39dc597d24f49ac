#include "ledger/ledger.h"

#include <algorithm>
#include <limits>
#include <variant>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/invariants.h"

namespace ledger {
namespace {

constexpr char kCommittedEventType[] = "transaction.committed";
constexpr int64_t kPruneBatch = 1000;
// A close refused for a balance that reads zero right after is tried again this often.
constexpr int kCloseAccountRoundsMax = 3;

using AccountsById = std::map<std::string, Account, std::less<>>;

std::vector<std::string> SortedDistinctAccounts(const std::vector<Posting>& postings) {
  std::vector<std::string> ids;
  for (const Posting& posting : postings) ids.push_back(posting.account_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Account existence, state and asset, each rule over all postings before the next, so
// the reported reason follows RejectionReason's precedence.
std::optional<Outcome> CheckAccountsUsable(const std::vector<Posting>& postings,
                                           const AccountsById& accounts) {
  for (const Posting& posting : postings) {
    if (accounts.count(posting.account_id) == 0) {
      return Outcome::Rejected(RejectionReason::kAccountNotFound,
                               absl::StrCat("account ", posting.account_id, " does not exist"));
    }
  }
  for (const Posting& posting : postings) {
    if (accounts.at(posting.account_id).closed) {
      return Outcome::Rejected(RejectionReason::kAccountClosed,
                               absl::StrCat("account ", posting.account_id, " is closed"));
    }
  }
  for (const Posting& posting : postings) {
    const Account& account = accounts.at(posting.account_id);
    if (account.asset != posting.asset) {
      return Outcome::Rejected(
          RejectionReason::kAssetMismatch,
          absl::StrCat("account ", account.id, " holds ", account.asset, ", not ", posting.asset));
    }
  }
  return std::nullopt;
}

// Applies the postings in order to copies of the accounts, producing the entries with
// each account's running balance and version. Rejects on overflow, then on any entry
// leaving an account below its floor.
absl::StatusOr<std::variant<Outcome, std::vector<Entry>>> BuildEntries(
    const std::vector<Posting>& postings, AccountsById& accounts) {
  std::vector<Entry> entries;
  for (const Posting& posting : postings) {
    Account& account = accounts.at(posting.account_id);
    std::optional<Amount> balance = CheckedAdd(account.balance, posting.amount);
    if (!balance.has_value()) {
      return Outcome::Rejected(RejectionReason::kBalanceOverflow,
                               absl::StrCat("account ", account.id, "'s balance would overflow"));
    }
    account.balance = *balance;
    account.version += 1;
    entries.push_back(
        {account.id, posting.asset, posting.amount, account.balance, account.version});
  }
  for (const Entry& entry : entries) {
    const Account& account = accounts.at(entry.account_id);
    if (entry.balance_after < account.BalanceFloor()) {
      return Outcome::Rejected(
          RejectionReason::kInsufficientFunds,
          absl::StrCat("account ", account.id, " would go to ", entry.balance_after,
                       ", below its floor of ", account.BalanceFloor()));
    }
  }
  return entries;
}

struct DebitTotals {
  int64_t count = 0;
  Amount amount = 0;
};

Amount SaturatingAdd(Amount a, Amount b) {
  return CheckedAdd(a, b).value_or(std::numeric_limits<Amount>::max());
}

absl::Status ValidateVelocityLimit(const VelocityLimit& limit, size_t index) {
  std::string field = absl::StrCat("LedgerOptions.velocity_limits[", index, "]");
  if (limit.window <= absl::ZeroDuration() || limit.window == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".window must be positive and finite, not ",
                     absl::FormatDuration(limit.window)));
  }
  if (limit.debit_count_max < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".debit_count_max must not be negative, not ", limit.debit_count_max));
  }
  if (limit.debit_amount_max < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".debit_amount_max must not be negative, not ", limit.debit_amount_max));
  }
  if (limit.debit_count_max == 0 && limit.debit_amount_max == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " sets neither debit_count_max nor debit_amount_max: it would limit nothing"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLedgerOptions(const LedgerOptions& options) {
  if (options.attempts_max < 1 || options.attempts_max > kAttemptsMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat("LedgerOptions.attempts_max must be 1 to ",
                                                   kAttemptsMaxLimit, ", not ",
                                                   options.attempts_max));
  }
  for (size_t index = 0; index < options.velocity_limits.size(); ++index) {
    LEDGER_RETURN_IF_ERROR(ValidateVelocityLimit(options.velocity_limits[index], index));
  }
  return absl::OkStatus();
}

absl::StatusOr<Ledger> Ledger::Open(std::shared_ptr<Engine> engine, LedgerOptions options) {
  if (engine == nullptr) return absl::InvalidArgumentError("Ledger::Open needs an engine, not null");
  LEDGER_RETURN_IF_ERROR(ValidateLedgerOptions(options));
  return Ledger(std::move(engine), std::move(options));
}

Ledger::Ledger(std::shared_ptr<Engine> engine, LedgerOptions options)
    : engine_(std::move(engine)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock::Default()) {}

absl::StatusOr<Outcome> Ledger::Submit(const SubmitRequest& request) {
  LEDGER_RETURN_IF_ERROR(ValidateKey(request.key));
  LEDGER_RETURN_IF_ERROR(ValidateScope(request.scope));
  LEDGER_RETURN_IF_ERROR(ValidateClaimOptions(request.claim));
  LEDGER_RETURN_IF_ERROR(ValidateOperation(request.operation));
  LEDGER_ASSIGN_OR_RETURN(std::string fingerprint,
                          Fingerprint(OperationPayload(request.operation)));
  if (!request.key_namespace.empty()) LEDGER_RETURN_IF_ERROR(ValidateNamespace(request.key_namespace));
  KeyIdentity identity{request.key_namespace.empty()
                           ? std::string(OperationKindName(request.operation.kind))
                           : request.key_namespace,
                       request.scope, request.key};

  absl::Status failure;
  for (int attempt = 1; attempt <= options_.attempts_max; ++attempt) {
    absl::StatusOr<Outcome> outcome = SubmitOnce(request, identity, fingerprint);
    if (outcome.ok()) return outcome;
    failure = outcome.status();
    if (!IsRetryable(failure)) break;  // only a rolled-back attempt is safe to rerun
  }
  switch (TagOf(failure)) {
    case ErrorTag::kConflict:
    case ErrorTag::kDuplicate:
    case ErrorTag::kInProgress:
    case ErrorTag::kInvariantViolated:
      return failure;
    default:
      return Outcome::Faulted(failure);
  }
}

absl::StatusOr<Outcome> Ledger::SubmitOnce(const SubmitRequest& request,
                                           const KeyIdentity& identity,
                                           const std::string& fingerprint) {
  const Operation& op = request.operation;
  absl::Time now = clock_->Now();
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> tx,
                          engine_->Begin(BeginOptions{request.claim.wait}));
  if (!skip_idempotency_) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> existing, tx->ClaimKey(identity));
    if (existing.has_value() && !existing->ExpiredAt(now)) {
      return Replay(*tx, *existing, fingerprint, request.claim.replay);
    }
  }

  std::vector<Posting> postings;
  std::optional<std::string> reversal_of;
  if (op.kind == OperationKind::kReverse) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> original,
                            tx->LoadTransaction(op.transaction_id));
    if (!original.has_value()) {
      return Decline(*tx, Outcome::Rejected(RejectionReason::kTransactionNotFound,
                                            absl::StrCat("no transaction ", op.transaction_id)));
    }
    if (original->reversal_of.has_value()) {
      return Decline(*tx, Outcome::Rejected(RejectionReason::kNotReversible,
                                            "a reversal cannot itself be reversed"));
    }
    postings = ReversalPostings(*original);
    reversal_of = original->id;
  } else {
    postings = PostingsOf(op);
  }

  // One lock order for every submit, so two transfers never deadlock each other.
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> locked,
                          tx->LockAccounts(SortedDistinctAccounts(postings)));
  if (reversal_of.has_value()) {
    // Checked under the account locks: a concurrent reversal has committed or waits.
    LEDGER_ASSIGN_OR_RETURN(bool reversed, tx->IsReversed(*reversal_of));
    if (reversed) {
      return Decline(*tx, Outcome::Rejected(RejectionReason::kAlreadyReversed,
                                            absl::StrCat(*reversal_of, " was reversed before")));
    }
  }
  AccountsById accounts;  // copies: `locked` stays as read, for the invariant checks
  for (const Account& account : locked) accounts.emplace(account.id, account);
  if (std::optional<Outcome> rejection = CheckAccountsUsable(postings, accounts)) {
    return Decline(*tx, *std::move(rejection));
  }
  LEDGER_ASSIGN_OR_RETURN(auto built, BuildEntries(postings, accounts));
  if (Outcome* rejection = std::get_if<Outcome>(&built)) return Decline(*tx, std::move(*rejection));
  if (op.kind != OperationKind::kReverse) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Outcome> rejection,
                            CheckVelocity(*tx, postings, accounts, now));
    if (rejection.has_value()) return Decline(*tx, *std::move(rejection));
  }

  Transaction transaction;
  transaction.id = NewTransactionId(now);
  transaction.kind = op.kind;
  transaction.created_at = now;
  LEDGER_ASSIGN_OR_RETURN(transaction.metadata, CanonicalJson(op.metadata));
  transaction.reversal_of = reversal_of;
  transaction.fingerprint = fingerprint;
  transaction.entries = std::get<std::vector<Entry>>(std::move(built));
  std::vector<Account> updated;
  for (auto& [id, account] : accounts) updated.push_back(account);

  if (tamper_plan_) tamper_plan_(transaction, updated);  // tests only: LedgerTestingHooks
  if (absl::Status broken = CheckPostingInvariants(locked, transaction.entries, updated);
      !broken.ok()) {
    tx->Rollback();  // a bug, not a request to retry: nothing of it may be written
    return broken;
  }
  LEDGER_RETURN_IF_ERROR(tx->WriteTransaction(transaction, updated));
  if (!skip_idempotency_) {
    LEDGER_RETURN_IF_ERROR(tx->RecordKey(
        KeyRecord{identity, fingerprint, transaction.id, now, now + request.claim.ttl}));
  }
  LEDGER_RETURN_IF_ERROR(tx->AppendEvent(OutboxEvent{
      0, transaction.id, kCommittedEventType, TransactionToJson(transaction).dump(), now}));
  LEDGER_RETURN_IF_ERROR(tx->Commit());
  return Outcome::Committed(std::move(transaction));
}

absl::StatusOr<Outcome> Ledger::Replay(StorageTransaction& tx, const KeyRecord& existing,
                                       const std::string& fingerprint, ReplayPolicy policy) {
  tx.Rollback();  // a replay writes nothing; the claim's placeholder (if any) goes too
  if (existing.fingerprint != fingerprint) {
    return ConflictError(absl::StrCat("idempotency key \"", existing.identity.key,
                                      "\" was already used with a different payload"));
  }
  if (policy == ReplayPolicy::kError) {
    return DuplicateError(absl::StrCat("idempotency key \"", existing.identity.key,
                                       "\" already committed transaction ",
                                       existing.transaction_id));
  }
  LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> original,
                          engine_->GetTransaction(existing.transaction_id));
  if (!original.has_value()) {
    return absl::DataLossError(absl::StrCat("key record points at missing transaction ",
                                            existing.transaction_id));
  }
  return Outcome::Duplicate(*std::move(original));
}

absl::StatusOr<Outcome> Ledger::Decline(StorageTransaction& tx, Outcome rejection) {
  tx.Rollback();  // the key stays unused: a retry may commit later
  return rejection;
}

absl::StatusOr<std::optional<Outcome>> Ledger::CheckVelocity(StorageTransaction& tx,
                                                             const std::vector<Posting>& postings,
                                                             const AccountsById& accounts,
                                                             absl::Time now) {
  if (options_.velocity_limits.empty()) return std::nullopt;
  std::map<std::string, DebitTotals> debits;  // this transaction's own debits
  for (const Posting& posting : postings) {
    if (posting.amount >= 0 || accounts.at(posting.account_id).allow_negative) continue;
    DebitTotals& totals = debits[posting.account_id];
    totals.count += 1;
    totals.amount = SaturatingAdd(totals.amount, -posting.amount);
  }
  std::optional<Outcome> amount_rejection;  // reported only if no count limit is hit
  for (const VelocityLimit& limit : options_.velocity_limits) {
    for (const auto& [account_id, own] : debits) {
      LEDGER_ASSIGN_OR_RETURN(DebitUsage usage, tx.LoadDebitUsage(account_id, now - limit.window));
      int64_t count = usage.count + own.count;
      Amount amount = SaturatingAdd(usage.amount, own.amount);
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

absl::Status Ledger::DefineAsset(const Asset& asset) {
  LEDGER_RETURN_IF_ERROR(ValidateAsset(asset));
  return engine_->PutAsset(asset);
}

absl::StatusOr<Account> Ledger::OpenAccount(const AccountSpec& spec) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountSpec(spec));
  LEDGER_ASSIGN_OR_RETURN(std::optional<Asset> asset, engine_->GetAsset(spec.asset));
  if (!asset.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("asset ", spec.asset, " is not defined; define it first"));
  }
  Account account;
  account.id = spec.id;
  account.asset = spec.asset;
  account.allow_negative = spec.allow_negative;
  account.overdraft_limit = spec.overdraft_limit;
  account.created_at = clock_->Now();
  LEDGER_RETURN_IF_ERROR(engine_->InsertAccount(account));
  return account;
}

absl::Status Ledger::CloseAccount(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountId(id));
  // The engine decides under the account's lock; the read after a refusal only explains
  // it. If money left the account in between, the close is tried again.
  for (int round = 0; round < kCloseAccountRoundsMax; ++round) {
    LEDGER_ASSIGN_OR_RETURN(bool closed, engine_->CloseAccountIfZeroBalance(id));
    if (closed) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(Account account, GetAccount(id));
    if (account.balance != 0) {
      return absl::FailedPreconditionError(absl::StrCat("account ", account.id, " has balance ",
                                                        account.balance,
                                                        "; move it out before closing"));
    }
  }
  return absl::AbortedError(absl::StrCat("account ", View(id), " kept changing while closing; retry"));
}

absl::StatusOr<Account> Ledger::GetAccount(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountId(id));
  LEDGER_ASSIGN_OR_RETURN(std::optional<Account> account, engine_->GetAccount(id));
  if (!account.has_value()) {
    return absl::NotFoundError(absl::StrCat("account ", View(id), " does not exist"));
  }
  return *std::move(account);
}

absl::StatusOr<Transaction> Ledger::GetTransaction(std::string_view id) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction, engine_->GetTransaction(id));
  if (!transaction.has_value()) {
    return absl::NotFoundError(absl::StrCat("transaction ", View(id), " does not exist"));
  }
  return *std::move(transaction);
}

absl::StatusOr<int64_t> Ledger::PruneExpiredKeys() {
  absl::Time now = clock_->Now();
  int64_t total = 0;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(int64_t deleted, engine_->PruneExpiredKeys(now, kPruneBatch));
    total += deleted;
    if (deleted < kPruneBatch) return total;
  }
}

}  // namespace ledger
