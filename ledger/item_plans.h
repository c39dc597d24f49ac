// How each operation family is decided inside a batch attempt (ledger/batch_attempt.h).
// The attempt runs one fixed sequence for every item that is not a replay; a family's
// plan fills in its steps:
//
//   NameTargets      before the locks: the transactions and holds the item reads
//   Postings         once they are read: the postings, or the rejection before them
//   AppendAccounts   the accounts the item locks and touches
//   Check            under the locks, against the items before it: a rejection before
//                    its accounts are checked
//   UsablePostings   the postings whose accounts must exist, be open, hold the asset
//   Make             the family's own rules over copies of the touched accounts: the
//                    rejection, or the transaction (entries, hold terms, hold_id)
//   Commit           what a committed transaction changes in the running state beyond
//                    accounts, debits and keys (reversals, hold statuses)
//
// Families: posting (top_up, spend, transfer, payout, post, reverse), hold, settlement
// (capture, void, and the hold sweep's expire). A new kind is a new plan and one line in
// PlanFor.
//
// Internal to ledger/. Thread-safe: the plans are stateless; everything they change is
// the AttemptState they are handed.
#ifndef LEDGER_LEDGER_ITEM_PLANS_H_
#define LEDGER_LEDGER_ITEM_PLANS_H_

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/attempt_state.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/posting_rules.h"

namespace ledger::internal {

// The ids a plan asks the attempt to read before the locks, each once: the plan adds an
// id only when it first enters the state's map (targets, holds) as not yet read.
struct TargetReads {
  std::vector<std::string> transaction_ids;
  std::vector<std::string> hold_ids;
};

// What a plan sees of the attempt deciding its item.
struct ItemContext {
  const Operation& operation;
  AttemptState& state;
  StorageTransaction& tx;
  const std::vector<VelocityLimit>& velocity_limits;
};

// The postings of an item, or the rejection that stops it before them.
using PlannedPostings = std::variant<Outcome, std::vector<Posting>>;
// What Make returns: the rejection, or the transaction its rules made.
using Made = std::variant<Outcome, Transaction>;

class ItemPlan {
 public:
  virtual ~ItemPlan() = default;

  // Before the database is read: the most entries the item may post.
  virtual size_t EntriesBound(const Operation& op) const { return PostingsOf(op).size(); }
  // Adds the transactions and holds the item must read before the locks.
  virtual void NameTargets(const Operation& op, AttemptState& state, TargetReads& reads) const;
  // Once NameTargets's reads are in `state`.
  virtual PlannedPostings Postings(const Operation& op, const AttemptState& state) const;
  // Appends the accounts the item touches: those of `postings` and those it changes
  // without posting to them. Not distinct: the caller sorts once (SortDistinct).
  virtual void AppendAccounts(const Operation& op, const std::vector<Posting>& postings,
                              const AttemptState& state, std::vector<std::string>& ids) const;
  // A result that decides the item before its accounts are checked (a rejection, or bad
  // input only the time shows), or none to go on.
  virtual std::optional<SubmitResult> Check(const Operation& op, const AttemptState& state) const;
  virtual std::vector<Posting> UsablePostings(const Operation& op,
                                              const std::vector<Posting>& postings) const;
  // Whether Make checks an account's available balance, so the lapsed holds of the
  // touched accounts must be loaded first.
  virtual bool ChecksAvailable(const Operation& /*op*/) const { return true; }
  // `touched`: copies of the locked accounts the item touches, changed as the item would
  // leave them. The transaction's id, kind, time, metadata and fingerprint are the
  // attempt's to fill in.
  virtual absl::StatusOr<Made> Make(const ItemContext& context,
                                    const std::vector<Posting>& postings,
                                    posting_rules::AccountsById& touched) const = 0;
  virtual void Commit(const Transaction& transaction, AttemptState& state) const;
};

// The plan of `kind`'s family.
const ItemPlan& PlanFor(OperationKind kind);

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_ITEM_PLANS_H_
