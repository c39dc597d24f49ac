// The reference model: an in-memory auditor that predicts the outcome of every submit
// from the contract alone (design.md, ledger/outcome.h), written apart from the
// pipeline in ledger/ledger.cc so that a bug in one is not silently copied into the
// other. It holds accounts (balance, version, floor, closed, recent debits), committed
// keys (fingerprint, transaction, expiry), every committed transaction and the set of
// reversed transactions.
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
  kClaim,    // replayed or declined right after the claim (reverse target unusable)
  kLock,     // declined after locking the accounts
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

  // Ledger::CloseAccount: NotFound, FailedPrecondition (balance not zero) or OK.
  absl::Status PredictClose(const std::string& account_id) const;
  void ApplyClose(const std::string& account_id);

  // The transaction last committed under `identity`, expired or not.
  std::optional<std::string> TransactionOf(const IdentityTuple& identity) const;

  const std::map<std::string, ModelAccount>& accounts() const { return accounts_; }
  const std::map<IdentityTuple, ModelKey>& keys() const { return keys_; }
  const std::map<std::string, Transaction>& transactions() const { return transactions_; }

  // The model's own invariants: per asset, balances sum to zero; no account below its
  // floor; each balance is the sum of the entries posted to it. Empty when they hold.
  std::string CheckOwnInvariants() const;

 private:
  std::optional<RejectionReason> CheckAccounts(const std::vector<Posting>& postings) const;
  std::optional<RejectionReason> BuildEntries(const std::vector<Posting>& postings,
                                              std::vector<Entry>& entries) const;
  std::optional<RejectionReason> CheckVelocity(const std::vector<Posting>& postings,
                                               absl::Time now) const;

  std::vector<VelocityLimit> velocity_limits_;
  std::map<std::string, ModelAccount> accounts_;
  std::map<IdentityTuple, ModelKey> keys_;
  std::map<std::string, Transaction> transactions_;
  std::set<std::string> reversed_;
  std::map<std::string, Amount> entry_sums_;  // per account: sum of posted entries
};

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_MODEL_H_
