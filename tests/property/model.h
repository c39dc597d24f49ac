// The reference model: an in-memory auditor that predicts the outcome of every submit
// from the contract alone (design.md, ledger/outcome.h), written apart from the
// pipeline in ledger/ledger.cc so that a bug in one is not silently copied into the
// other. It holds accounts (balance, version, floor, closed, recent debits, pending
// debits and credits as stored), committed keys (fingerprint, transaction, expiry),
// every committed transaction, the set of reversed transactions and every hold with its
// status as stored. A pending hold past its expires_at reserves nothing and can no longer
// be settled (ledger/hold.h), whether or not a sweep has recorded its expiry: the model
// asks "as of now" for available balances, velocity and settlements.
//
//   LedgerModel model(velocity_limits);
//   model.AddAccount(account);
//   Prediction p = model.Predict(request, now);
//   ... compare with Ledger::Submit ... then model.ApplyCommit(request, transaction);
//
// Not thread-safe: single-threaded runs only; concurrent runs check other properties.
#ifndef LEDGER_TESTS_PROPERTY_MODEL_H_
#define LEDGER_TESTS_PROPERTY_MODEL_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ledger/account.h"
#include "ledger/hold.h"
#include "ledger/ledger.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"

namespace ledger::property {

// (namespace, "tenant/actor", key): the unique key of the key table.
using IdentityTuple = std::tuple<std::string, std::string, std::string>;
IdentityTuple IdentityOf(const SubmitRequest& request);
IdentityTuple IdentityOf(const KeyIdentity& identity);
std::string IdentityText(const IdentityTuple& identity);

enum class Expected { kInvalid, kConflict, kDuplicate, kRejected, kCommitted };

// How far a submit gets in the pipeline (ledger/engine.h's call order), which decides
// which fault points it passes.
enum class Reach {
  kNothing,  // invalid input: no transaction is begun
  kClaim,    // replayed or declined right after the claim (reverse target or hold unknown)
  kLock,     // declined after locking the accounts (also a hold whose expires_at passed)
  kCommit,   // posts and commits
};

struct Prediction {
  Expected kind = Expected::kInvalid;
  RejectionReason reason = RejectionReason::kAccountNotFound;  // kRejected
  // kDuplicate: the recorded transaction. kCommitted: everything but the id.
  Transaction transaction;
  std::string fingerprint;
  Reach reach = Reach::kNothing;
};

std::string DescribePrediction(const Prediction& prediction);

struct ModelAccount {
  Account account;
  std::vector<std::pair<absl::Time, Amount>> debits;  // (created_at, amount < 0)
};

struct ModelKey {
  std::string fingerprint;
  std::string transaction_id;
  absl::Time expires_at;
};

class LedgerModel {
 public:
  explicit LedgerModel(std::vector<VelocityLimit> velocity_limits)
      : velocity_limits_(std::move(velocity_limits)) {}

  void AddAccount(const Account& account);

  Prediction Predict(const SubmitRequest& request, absl::Time now) const;
  // Records a committed transaction (its id as the engine chose it). `prediction` must
  // be Predict's kCommitted answer for the same request and time.
  void ApplyCommit(const SubmitRequest& request, const Prediction& prediction,
                   const std::string& transaction_id, absl::Time ttl_start, absl::Duration ttl);

  // Ledger::CloseAccount at `now`: NotFound, FailedPrecondition (balance not zero, or
  // holds still reserving) or OK. An OK close of an account whose stored pending amounts
  // are only lapsed holds first sweeps every lapsed hold (CloseSweeps).
  absl::Status PredictClose(const std::string& account_id, absl::Time now) const;
  bool CloseSweeps(const std::string& account_id) const;
  void ApplyClose(const std::string& account_id);

  // Ledger::ExpireHolds at `now`: the pending holds past their expiry, by (expires_at, id).
  std::vector<std::string> LapsedHoldIds(absl::Time now) const;
  // The expire transaction the sweep writes for `hold_id` (all but its id).
  Transaction PredictExpiry(const std::string& hold_id, absl::Time now) const;
  // Records the sweep's expiry of a lapsed hold, by transaction `transaction_id`.
  void ApplyExpiry(const std::string& hold_id, const std::string& transaction_id, absl::Time now);

  // The account as Ledger::GetAccount shows it at `now`: lapsed holds not counted.
  Account AccountAsOf(const std::string& account_id, absl::Time now) const;
  // The hold as Ledger::GetHold shows it at `now`: a lapsed pending hold reads expired.
  Hold HoldAsOf(const std::string& hold_id, absl::Time now) const;

  // The transaction last committed under `identity`, expired or not.
  std::optional<std::string> TransactionOf(const IdentityTuple& identity) const;

  const std::map<std::string, ModelAccount>& accounts() const { return accounts_; }
  const std::map<IdentityTuple, ModelKey>& keys() const { return keys_; }
  const std::map<std::string, Transaction>& transactions() const { return transactions_; }
  const std::map<std::string, Hold>& holds() const { return holds_; }

  // The model's own invariants: per asset, balances sum to zero; no account below its
  // floor, nor its available balance at `now`; each balance is the sum of the entries
  // posted to it; stored pending amounts are the sums of the pending holds. Empty when
  // they hold.
  std::string CheckOwnInvariants(absl::Time now) const;

 private:
  Prediction PredictHold(Prediction prediction, const Operation& op, absl::Time now) const;
  Prediction PredictSettlement(Prediction prediction, const Operation& op, absl::Time now) const;
  std::optional<RejectionReason> CheckAccounts(const std::vector<Posting>& postings) const;
  // `released`: an amount the operation itself releases from an account's pending debits
  // first (a capture's hold).
  std::optional<RejectionReason> BuildEntries(const std::vector<Posting>& postings,
                                              std::vector<Entry>& entries, absl::Time now,
                                              const std::map<std::string, Amount>& released) const;
  std::optional<RejectionReason> CheckVelocity(const std::vector<Posting>& postings,
                                               absl::Time now) const;
  // Pending debits (credits) of the account's holds past their expiry at `now`.
  Amount LapsedDebits(const std::string& account_id, absl::Time now) const;
  Amount LapsedCredits(const std::string& account_id, absl::Time now) const;
  // balance - (pending debits still reserving at `now`), less `released`.
  Amount AvailableAt(const Account& account, Amount balance, absl::Time now,
                     Amount released) const;
  // Takes a pending hold out of the pending amounts (settled or expired).
  void Release(const Hold& hold);
  // The account's pending holds (from or to it), as stored.
  std::vector<const Hold*> PendingHoldsOf(const std::string& account_id) const;

  std::vector<VelocityLimit> velocity_limits_;
  std::map<std::string, ModelAccount> accounts_;
  std::map<IdentityTuple, ModelKey> keys_;
  std::map<std::string, Transaction> transactions_;
  std::set<std::string> reversed_;
  std::map<std::string, Amount> entry_sums_;  // per account: sum of posted entries
  std::map<std::string, Hold> holds_;         // by id, status as stored
  std::map<std::string, std::set<std::string>> pending_by_account_;  // from and to: hold ids
};

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_MODEL_H_
