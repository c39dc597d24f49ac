#include "ledger/item_plans.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"

namespace ledger::internal {
namespace {

using posting_rules::AccountsById;

// The hold a settlement names, as read (none: not found). NameTargets asked for it.
const std::optional<Hold>& ReadHold(const Operation& op, const AttemptState& state) {
  auto read = state.holds.find(op.hold_id);
  LEDGER_CHECK(read != state.holds.end())
      << OperationKindName(op.kind) << " of hold " << op.hold_id
      << " planned before its hold was read";
  return read->second;
}

// The hold a settlement names, once Postings found it.
const Hold& NamedHold(const Operation& op, const AttemptState& state) {
  const std::optional<Hold>& hold = ReadHold(op, state);
  LEDGER_CHECK(hold.has_value()) << OperationKindName(op.kind) << " of hold " << op.hold_id
                                 << " went on after the hold was not found";
  return *hold;
}

// Entries that move money between accounts: every kind but the holds'. A reverse posts
// the target's entries negated.
class PostingPlan final : public ItemPlan {
 public:
  size_t EntriesBound(const Operation& op) const override {
    // A reverse's target is not known before the database is read.
    return op.kind == OperationKind::kReverse ? kPostingsPerTransactionMax
                                              : PostingsOf(op).size();
  }

  void NameTargets(const Operation& op, AttemptState& state, TargetReads& reads) const override {
    if (op.kind == OperationKind::kReverse &&
        state.targets.emplace(op.transaction_id, std::nullopt).second) {
      reads.transaction_ids.push_back(op.transaction_id);
    }
  }

  PlannedPostings Postings(const Operation& op, const AttemptState& state) const override {
    if (op.kind != OperationKind::kReverse) return PostingsOf(op);
    auto read = state.targets.find(op.transaction_id);
    LEDGER_CHECK(read != state.targets.end())
        << "reverse of " << op.transaction_id << " planned before its target was read";
    const std::optional<Transaction>& target = read->second;
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

  std::optional<SubmitResult> Check(const Operation& op, const AttemptState& state) const override {
    if (op.kind == OperationKind::kReverse && state.reversed.count(op.transaction_id) > 0) {
      return Outcome::Rejected(RejectionReason::kAlreadyReversed,
                               absl::StrCat(op.transaction_id, " was reversed before"));
    }
    return std::nullopt;
  }

  absl::StatusOr<Made> Make(const ItemContext& context, const std::vector<Posting>& postings,
                            AccountsById& touched) const override {
    const Operation& op = context.operation;
    auto built = posting_rules::BuildEntries(postings, touched, context.state.lapsed);
    if (Outcome* rejection = std::get_if<Outcome>(&built)) return std::move(*rejection);
    if (op.kind != OperationKind::kReverse) {  // reversals correct, they do not spend
      LEDGER_ASSIGN_OR_RETURN(
          std::optional<Outcome> rejection,
          context.state.CheckVelocity(context.tx, context.velocity_limits, postings, touched));
      if (rejection.has_value()) return *std::move(rejection);
    }
    Transaction transaction;
    if (op.kind == OperationKind::kReverse) transaction.reversal_of = op.transaction_id;
    transaction.entries = std::get<std::vector<Entry>>(std::move(built));
    return transaction;
  }

  void Commit(const Transaction& transaction, AttemptState& state) const override {
    if (transaction.reversal_of.has_value()) state.reversed.insert(*transaction.reversal_of);
  }
};

// A hold: posts nothing, reserves its amount out of `from` for `to`.
class HoldPlan final : public ItemPlan {
 public:
  void AppendAccounts(const Operation& op, const std::vector<Posting>& postings,
                      const AttemptState& state, std::vector<std::string>& ids) const override {
    ItemPlan::AppendAccounts(op, postings, state, ids);
    ids.insert(ids.end(), {op.from, op.to});
  }

  std::optional<SubmitResult> Check(const Operation& op, const AttemptState& state) const override {
    if (op.expires_at.has_value() && *op.expires_at <= state.now) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expires_at ", FormatTimestamp(*op.expires_at), " is not in the future"));
    }
    return std::nullopt;
  }

  // A hold posts nothing but must name usable accounts, like the transfer it reserves.
  std::vector<Posting> UsablePostings(const Operation& op,
                                      const std::vector<Posting>&) const override {
    return CapturePostings({op.from, op.to, op.asset, op.amount}, op.amount);
  }

  absl::StatusOr<Made> Make(const ItemContext& context, const std::vector<Posting>&,
                            AccountsById& touched) const override {
    const Operation& op = context.operation;
    HoldTerms terms{op.from, op.to, op.asset, op.amount, op.expires_at};
    if (op.timeout.has_value()) terms.expires_at = context.state.now + *op.timeout;
    if (std::optional<Outcome> rejection =
            posting_rules::Reserve(terms, touched, context.state.lapsed)) {
      return *std::move(rejection);
    }
    // Velocity counts a hold as the debit it reserves (its capture is not checked again).
    LEDGER_ASSIGN_OR_RETURN(std::optional<Outcome> rejection,
                            context.state.CheckVelocity(context.tx, context.velocity_limits,
                                                        {{op.from, op.asset, -op.amount}},
                                                        touched));
    if (rejection.has_value()) return *std::move(rejection);
    Transaction transaction;
    transaction.hold = std::move(terms);
    return transaction;
  }
};

// What settles a pending hold, exactly once: a capture posts all or part of it, a void
// releases it, and the hold sweep's expire releases a hold past its expiry (no key: it
// is the ledger's own item, never a caller's). Each releases the hold's reservation.
class SettlementPlan final : public ItemPlan {
 public:
  void NameTargets(const Operation& op, AttemptState& state, TargetReads& reads) const override {
    if (state.holds.emplace(op.hold_id, std::nullopt).second) reads.hold_ids.push_back(op.hold_id);
  }

  PlannedPostings Postings(const Operation& op, const AttemptState& state) const override {
    const std::optional<Hold>& hold = ReadHold(op, state);
    if (!hold.has_value()) {
      return Outcome::Rejected(RejectionReason::kHoldNotFound, absl::StrCat("no hold ", op.hold_id));
    }
    if (op.kind != OperationKind::kCapture) return std::vector<Posting>{};
    return CapturePostings(hold->terms, op.capture_amount.value_or(hold->terms.amount));
  }

  void AppendAccounts(const Operation& op, const std::vector<Posting>& postings,
                      const AttemptState& state, std::vector<std::string>& ids) const override {
    ItemPlan::AppendAccounts(op, postings, state, ids);
    const HoldTerms& terms = NamedHold(op, state).terms;
    ids.insert(ids.end(), {terms.from, terms.to});
  }

  std::optional<SubmitResult> Check(const Operation& op, const AttemptState& state) const override {
    const std::optional<Hold>& hold = ReadHold(op, state);
    if (op.kind != OperationKind::kExpire) {
      return posting_rules::CheckHoldSettleable(op.hold_id, hold, state.now);
    }
    if (NamedHold(op, state).LapsedAt(state.now)) return std::nullopt;
    // Settled since the sweep listed it (the rejection a void would get), or not past
    // its expiry at the attempt's time (a clock set back): nothing to expire.
    if (std::optional<Outcome> settled =
            posting_rules::CheckHoldSettleable(op.hold_id, hold, state.now)) {
      return *std::move(settled);
    }
    return absl::FailedPreconditionError(absl::StrCat("hold ", op.hold_id, " has not lapsed at ",
                                                      FormatTimestamp(state.now)));
  }

  // Only a capture posts, so only it can take an account below its floor.
  bool ChecksAvailable(const Operation& op) const override {
    return op.kind == OperationKind::kCapture;
  }

  absl::StatusOr<Made> Make(const ItemContext& context, const std::vector<Posting>& postings,
                            AccountsById& touched) const override {
    const Operation& op = context.operation;
    const Hold& hold = NamedHold(op, context.state);
    if (op.capture_amount.value_or(0) > hold.terms.amount) {
      return Outcome::Rejected(RejectionReason::kCaptureExceedsHold,
                               absl::StrCat("capture of ", *op.capture_amount, " from hold ",
                                            hold.id, " of ", hold.terms.amount));
    }
    posting_rules::Release(hold.terms, touched);
    Transaction transaction;
    transaction.hold_id = hold.id;
    if (postings.empty()) return transaction;  // a void or an expiry
    // The release covers the captured amount, so the capture cannot go below a floor.
    auto built = posting_rules::BuildEntries(postings, touched, context.state.lapsed);
    if (Outcome* rejection = std::get_if<Outcome>(&built)) return std::move(*rejection);
    transaction.entries = std::get<std::vector<Entry>>(std::move(built));
    return transaction;
  }

  // Later items see the hold settled.
  void Commit(const Transaction& transaction, AttemptState& state) const override {
    LEDGER_CHECK(transaction.hold_id.has_value()) << "a settlement without a hold_id";
    auto read = state.holds.find(*transaction.hold_id);
    LEDGER_CHECK(read != state.holds.end() && read->second.has_value())
        << "hold " << *transaction.hold_id << " settled without being read";
    Hold& hold = *read->second;
    hold.status = transaction.kind == OperationKind::kCapture  ? HoldStatus::kCaptured
                  : transaction.kind == OperationKind::kExpire ? HoldStatus::kExpired
                                                               : HoldStatus::kVoided;
    hold.settled_by = transaction.id;
    if (transaction.kind == OperationKind::kExpire) {
      // The stored pending debits no longer hold it, so it no longer lapses in them; a
      // lapsed hold was never in the velocity usage.
      if (auto lapsed = state.lapsed.find(hold.terms.from); lapsed != state.lapsed.end()) {
        lapsed->second -= hold.terms.amount;
      }
    } else if (state.held_from.count(hold.terms.from) > 0) {
      state.settled.push_back(hold);
    }
  }
};

}  // namespace

void ItemPlan::NameTargets(const Operation&, AttemptState&, TargetReads&) const {}

PlannedPostings ItemPlan::Postings(const Operation& op, const AttemptState&) const {
  return PostingsOf(op);
}

void ItemPlan::AppendAccounts(const Operation&, const std::vector<Posting>& postings,
                              const AttemptState&, std::vector<std::string>& ids) const {
  for (const Posting& posting : postings) ids.push_back(posting.account_id);
}

std::optional<SubmitResult> ItemPlan::Check(const Operation&, const AttemptState&) const {
  return std::nullopt;
}

std::vector<Posting> ItemPlan::UsablePostings(const Operation&,
                                              const std::vector<Posting>& postings) const {
  return postings;
}

void ItemPlan::Commit(const Transaction&, AttemptState&) const {}

const ItemPlan& PlanFor(OperationKind kind) {
  static const PostingPlan kPosting;
  static const HoldPlan kHold;
  static const SettlementPlan kSettlement;
  switch (kind) {
    case OperationKind::kHold:
      return kHold;
    case OperationKind::kCapture:
    case OperationKind::kVoid:
    case OperationKind::kExpire:
      return kSettlement;
    case OperationKind::kTopUp:
    case OperationKind::kSpend:
    case OperationKind::kTransfer:
    case OperationKind::kPayout:
    case OperationKind::kReverse:
    case OperationKind::kPost:
      break;
  }
  return kPosting;
}

}  // namespace ledger::internal
