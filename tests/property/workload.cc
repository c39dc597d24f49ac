#include "tests/property/workload.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status.h"
#include "ledger/ledger.h"
#include "ledger/transaction.h"

namespace ledger::property {
namespace {

using testing::FaultPoint;

constexpr int kCreditWallets = 150;
constexpr int kHotWallets = 5;
constexpr int kUsdWallets = 20;
constexpr int kMerchants = 20;
constexpr int kClosedAccounts = 5;
constexpr int kGhosts = 5;
constexpr Amount kOverdraftLimitMax = 800;
constexpr absl::Duration kShortTtl = absl::Minutes(30);
// Hold timeouts: short ones the steady clock (0-2 s a step) passes within a run, long
// ones only a clock jump passes.
constexpr int64_t kShortHoldTimeoutSecondsMax = 90;
constexpr int64_t kLongHoldTimeoutMinutesMax = 60;
constexpr Amount kCaptureAboveHoldMax = 500;

// Every draw goes through this, not through <random>'s distributions, whose results are
// implementation-defined: a seed must replay identically everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  uint64_t Next() { return engine_(); }
  // Uniform in [low, high].
  int64_t Between(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(Next() % static_cast<uint64_t>(high - low + 1));
  }
  // True with probability percent / 100.
  bool Percent(int percent) { return Between(0, 99) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(Between(0, static_cast<int64_t>(items.size()) - 1))];
  }
  // Half the draws land on the first few items: hot accounts.
  const std::string& PickSkewed(const std::vector<std::string>& items) {
    int64_t hot = std::min<int64_t>(kHotWallets, static_cast<int64_t>(items.size()));
    if (Percent(50)) return items[static_cast<size_t>(Between(0, hot - 1))];
    return Pick(items);
  }

 private:
  std::mt19937_64 engine_;
};

std::string Numbered(const char* prefix, int n) { return absl::StrFormat("%s-%03d", prefix, n); }

const std::string& OtherThan(Random& random, const std::vector<std::string>& pool,
                             const std::string& taken) {
  while (true) {
    const std::string& candidate = random.PickSkewed(pool);
    if (candidate != taken) return candidate;
  }
}

Scope PickScope(Random& random) {
  return random.Percent(80) ? Scope{"acme", "api"} : Scope{"globex", "api"};
}

Scope OtherScope(const Scope& scope) {
  return scope.tenant == "acme" ? Scope{"globex", "api"} : Scope{"acme", "api"};
}

nlohmann::json PickMetadata(Random& random, int serial) {
  switch (random.Between(0, 5)) {
    case 0:
      return nlohmann::json::object();
    case 1:
      return {{"note", "caf\u00e9 \u2713"}, {"order", absl::StrCat("o-", serial)}};
    case 2:
      return {{"order", absl::StrCat("o-", serial)}, {"lines", {1, 2, 3}}, {"gift", true}};
    default:
      return {{"order", absl::StrCat("o-", serial)}};
  }
}

// Makes operations of every kind over the universe's pools.
class OperationMaker {
 public:
  OperationMaker(Random& random, const Universe& universe) : random_(random), universe_(universe) {}

  Operation TopUp() {
    if (random_.Percent(20)) {
      return Operation::TopUp(universe_.usd_issuance, random_.PickSkewed(universe_.usd_wallets),
                              kUsd, random_.Between(100, 20'000));
    }
    const std::string& to = random_.Percent(85) ? random_.PickSkewed(universe_.credit_wallets)
                                                : random_.Pick(universe_.merchants);
    return Operation::TopUp(universe_.issuance, to, kCredits, random_.Between(500, 6000));
  }

  Operation Transfer() {
    if (random_.Percent(15)) {
      const std::string& from = random_.PickSkewed(universe_.usd_wallets);
      return Operation::Transfer(from, OtherThan(random_, universe_.usd_wallets, from), kUsd,
                                 random_.Between(1, 5000));
    }
    const std::string& from = random_.PickSkewed(universe_.credit_wallets);
    if (random_.Percent(4)) {  // a CREDITS posting to a USD wallet: asset mismatch
      return Operation::Transfer(from, random_.Pick(universe_.usd_wallets), kCredits,
                                 random_.Between(1, 100));
    }
    return Operation::Transfer(from, OtherThan(random_, universe_.credit_wallets, from), kCredits,
                               random_.Between(1, 1500));
  }

  Operation Spend() {
    Amount amount = random_.Between(2, 2000);
    std::optional<Fee> fee;
    if (random_.Percent(50))
      fee = Fee{universe_.platform, random_.Between(1, std::max<Amount>(1, amount / 10))};
    return Operation::Spend(random_.PickSkewed(universe_.credit_wallets),
                            random_.PickSkewed(universe_.merchants), kCredits, amount, fee);
  }

  Operation Payout() {
    return Operation::Payout(random_.PickSkewed(universe_.merchants), universe_.payouts, kCredits,
                             random_.Between(1, 3000));
  }

  // Three legs, sometimes a second asset's pair on top: balanced per asset.
  Operation Post() {
    const std::string& payer = random_.PickSkewed(universe_.credit_wallets);
    const std::string& payee = OtherThan(random_, universe_.credit_wallets, payer);
    const std::string& merchant = random_.Pick(universe_.merchants);
    Amount total = random_.Between(2, 1000);
    Amount part = random_.Between(1, total - 1);
    std::vector<Posting> postings = {
        {payer, kCredits, -total}, {payee, kCredits, part}, {merchant, kCredits, total - part}};
    if (random_.Percent(30)) {
      const std::string& usd_from = random_.PickSkewed(universe_.usd_wallets);
      Amount usd = random_.Between(1, 2000);
      postings.push_back({usd_from, kUsd, -usd});
      postings.push_back({OtherThan(random_, universe_.usd_wallets, usd_from), kUsd, usd});
    }
    return Operation::Post(std::move(postings));
  }

  // A hold from issuance to a wallet (a pending top-up, as a card authorization), from a
  // (hot) wallet to a merchant or another wallet, or from a merchant to payout clearing.
  // Without expiry, with a timeout (short: the steady clock passes it; long: a clock
  // jump does), or with an absolute expires_at planned from `planned_now` (when shrinking
  // drops clock moves the run is earlier, so it stays ahead), now and then one already
  // behind it (bad input the ledger can only see at commit).
  Operation Hold(absl::Time planned_now) {
    Operation op;
    int roll = static_cast<int>(random_.Between(0, 99));
    // Mostly amounts the hot accounts can cover, so that most holds are placed and
    // settlements find them; some too large for their available balance.
    Amount amount = random_.Percent(80) ? random_.Between(1, 600) : random_.Between(601, 3000);
    if (roll < 40) {  // never short of funds: issuance may go negative
      op = Operation::Hold(universe_.issuance, random_.PickSkewed(universe_.credit_wallets),
                           kCredits, random_.Between(1, 3000));
    } else if (roll < 50) {
      const std::string& from = random_.PickSkewed(universe_.usd_wallets);
      op = Operation::Hold(from, OtherThan(random_, universe_.usd_wallets, from), kUsd, amount);
    } else if (roll < 65) {
      op = Operation::Hold(random_.PickSkewed(universe_.merchants), universe_.payouts, kCredits,
                           amount);
    } else {
      const std::string& from = random_.Percent(70)
                                    ? universe_.credit_wallets[static_cast<size_t>(
                                          random_.Between(0, kHotWallets - 1))]
                                    : random_.Pick(universe_.credit_wallets);
      const std::string& to = random_.Percent(50)
                                  ? random_.PickSkewed(universe_.merchants)
                                  : OtherThan(random_, universe_.credit_wallets, from);
      op = Operation::Hold(from, to, kCredits, amount);
    }
    int expiry = static_cast<int>(random_.Between(0, 99));
    if (expiry < 40) return op;
    if (expiry < 62) {
      op.timeout = absl::Seconds(random_.Between(5, kShortHoldTimeoutSecondsMax));
    } else if (expiry < 85) {
      op.timeout = absl::Minutes(random_.Between(5, kLongHoldTimeoutMinutesMax));
    } else if (expiry < 97) {
      op.expires_at = planned_now + absl::Seconds(random_.Between(30, 1800));
    } else {
      op.expires_at = planned_now - absl::Seconds(random_.Between(1, 60));
    }
    return op;
  }

  // A capture of all of a hold of `held` (0: unknown), part of it, exactly it, more than
  // it, or (bad input) nothing.
  Operation Capture(Amount held) {
    Operation op = Operation::Capture("");  // hold_id resolved when the step runs
    int roll = static_cast<int>(random_.Between(0, 99));
    if (roll < 35 || held == 0) return op;
    if (roll < 65 && held > 1) {
      op.capture_amount = random_.Between(1, held - 1);
    } else if (roll < 80) {
      op.capture_amount = held;
    } else if (roll < 97) {
      op.capture_amount = held + random_.Between(1, kCaptureAboveHoldMax);
    } else {
      op.capture_amount = 0;
    }
    return op;
  }

  // Points one account of a two-party move or hold at a ghost or a closed account.
  void Misdirect(Operation& op) {
    if (op.kind == OperationKind::kPost || op.kind == OperationKind::kReverse ||
        op.kind == OperationKind::kCapture || op.kind == OperationKind::kVoid) {
      return;
    }
    const std::string& bad = random_.Percent(50) ? random_.Pick(universe_.ghosts)
                                                 : random_.Pick(universe_.closed_at_setup);
    (random_.Percent(50) ? op.to : op.from) = bad;
    if (op.from == op.to) op.to = random_.Pick(universe_.ghosts) + "-x";
  }

 private:
  Random& random_;
  const Universe& universe_;
};

class WorkloadGenerator {
 public:
  WorkloadGenerator(uint64_t seed, const Universe& universe, const WorkloadOptions& options)
      : random_(seed), maker_(random_, universe), universe_(universe), options_(options) {}

  std::vector<Step> Generate() {
    std::vector<int> restart_steps;
    for (int i = 1; i <= options_.server_restarts; ++i) {
      restart_steps.push_back(i * options_.steps / (options_.server_restarts + 1));
    }
    while (static_cast<int>(steps_.size()) < options_.steps) {
      int index = static_cast<int>(steps_.size());
      Step step = NextStep();
      step.advance += NextAdvance();  // a sweep may already move past an expiry
      planned_now_ += step.advance;
      if (step.kind == StepKind::kSubmit) step.fault = NextFault();
      if (step.kind == StepKind::kExpireHolds) step.fault = NextSweepFault();
      auto restart = std::find(restart_steps.begin(), restart_steps.end(), index);
      if (restart != restart_steps.end() && step.kind == StepKind::kSubmit) {
        // Alternate: mid-transaction (after the entries are written), then idle.
        bool mid = (restart - restart_steps.begin()) % 2 == 0;
        step.fault = {FaultMode::kRestartServer,
                      mid ? FaultPoint::kAfterWrite : FaultPoint::kBegin};
      } else if (restart != restart_steps.end()) {
        restart_steps.push_back(index + 1);  // a close step: restart at the next submit
      }
      bool delivered_twice = step.kind != StepKind::kCloseAccount && random_.Percent(4);
      steps_.push_back(step);
      if (delivered_twice && static_cast<int>(steps_.size()) < options_.steps) {
        Step again = step;
        again.advance = absl::ZeroDuration();
        again.fault = {};
        again.origin = absl::StrCat("duplicate delivery of #", index);
        steps_.push_back(std::move(again));
      }
    }
    return steps_;
  }

 private:
  Step NextStep() {
    int roll = static_cast<int>(random_.Between(0, 99));
    if (!sent_.empty()) {
      if (roll < 12) return Resend(PickSent(), "retry of #");
      if (roll < 17) return Conflicting(PickSent());
      if (roll < 19) return InOtherScope(PickSent());
    }
    if (roll >= 19 && roll < 21) return Close();
    if (roll >= 21 && roll < 24) return Sweep();
    return Fresh();
  }

  const std::pair<int, Request>& PickSent() {
    if (random_.Percent(60)) {
      size_t recent = std::min<size_t>(8, sent_.size());
      return sent_[sent_.size() - 1 - static_cast<size_t>(random_.Between(0, recent - 1))];
    }
    return random_.Pick(sent_);
  }

  Step Resend(const std::pair<int, Request>& earlier, const char* why) {
    Step step;
    step.request = earlier.second;
    step.origin = absl::StrCat(why, earlier.first);
    return step;
  }

  // Same key, scope and kind; another payload: a conflict if the key committed.
  Step Conflicting(const std::pair<int, Request>& earlier) {
    Step step = Resend(earlier, "conflicting payload for the key of #");
    Operation& op = step.request.operation;
    bool two_party = op.kind != OperationKind::kPost && op.kind != OperationKind::kReverse &&
                     op.kind != OperationKind::kCapture && op.kind != OperationKind::kVoid;
    if (two_party && random_.Percent(50)) {
      op.amount += 1;
    } else {
      op.metadata["variant"] = static_cast<int64_t>(steps_.size());
    }
    Remember(step.request);
    return step;
  }

  Step InOtherScope(const std::pair<int, Request>& earlier) {
    Step step = Resend(earlier, "same key and payload, other scope, as #");
    step.request.scope = OtherScope(step.request.scope);
    Remember(step.request);
    return step;
  }

  Step Close() {
    Step step;
    step.kind = StepKind::kCloseAccount;
    int which = static_cast<int>(random_.Between(0, 2));
    if (which == 0) {
      step.account_id = universe_.credit_wallets[static_cast<size_t>(
          random_.Between(100, static_cast<int64_t>(universe_.credit_wallets.size()) - 1))];
    } else if (which == 1) {
      step.account_id = random_.Pick(universe_.usd_wallets);
    } else {
      step.account_id = random_.Pick(universe_.closed_at_setup);
    }
    step.origin = "close";
    return step;
  }

  // Ledger::ExpireHolds; half the time right past the expiry of a recent timed hold.
  Step Sweep() {
    Step step;
    step.kind = StepKind::kExpireHolds;
    step.origin = "expire holds";
    std::vector<const PlannedHold*> timed;
    for (const PlannedHold& hold : holds_) {
      if (hold.timeout.has_value()) timed.push_back(&hold);
    }
    if (!timed.empty() && random_.Percent(50)) {
      const PlannedHold& hold = *timed[timed.size() - 1 - static_cast<size_t>(random_.Between(
                                            0, std::min<int64_t>(5, timed.size()) - 1))];
      step.advance = *hold.timeout + absl::Seconds(1);
      step.origin = absl::StrCat("expire holds, past the timeout of #", hold.step_index);
    }
    return step;
  }

  Step Fresh() {
    Step step;
    step.origin = "new";
    Request& request = step.request;
    request.key = absl::StrCat("op-", next_key_++);
    request.scope = PickScope(random_);
    if (random_.Percent(10)) request.ttl = kShortTtl;
    int roll = static_cast<int>(random_.Between(0, 99));
    Operation op;
    // Holds and their settlements took their share from the older kinds (issue 13).
    if (roll < 22) {
      op = maker_.TopUp();
    } else if (roll < 36) {
      op = maker_.Transfer();
    } else if (roll < 48) {
      op = maker_.Spend();
    } else if (roll < 56) {
      op = maker_.Payout();
    } else if (roll < 63) {
      op = maker_.Post();
    } else if (roll < 75) {
      op = maker_.Hold(planned_now_);
    } else if (roll < 84) {
      op = Settle(request, OperationKind::kCapture);
    } else if (roll < 89) {
      op = Settle(request, OperationKind::kVoid);
    } else if (roll < 98 && !reversible_.empty()) {
      op = Reverse(request);
    } else {
      op = maker_.Transfer();
      op.to = op.from;  // invalid input: rejected before anything runs
      step.origin = "new, invalid (from == to)";
    }
    if (random_.Percent(4)) maker_.Misdirect(op);
    op.metadata = PickMetadata(random_, next_key_);
    request.operation = std::move(op);
    if (request.operation.kind != OperationKind::kReverse) {
      reversible_.push_back({std::string(kDefaultKeyNamespace), request.scope, request.key});
    } else {
      reversals_.push_back({std::string(kDefaultKeyNamespace), request.scope, request.key});
    }
    if (request.operation.kind == OperationKind::kHold) {
      holds_.push_back({{std::string(kDefaultKeyNamespace), request.scope, request.key},
                        request.operation.amount,
                        request.operation.timeout,
                        static_cast<int>(steps_.size())});
    }
    Remember(request);
    return step;
  }

  // A capture or void of a hold sent earlier (recent ones mostly; a quarter of the time
  // one some settlement already named: settled, or about to be), or of one never sent.
  Operation Settle(Request& request, OperationKind kind) {
    const PlannedHold* hold = nullptr;
    if (!holds_.empty() && !random_.Percent(6)) {
      if (!settled_.empty() && random_.Percent(25)) {
        hold = &holds_[random_.Pick(settled_)];
      } else if (random_.Percent(60)) {
        size_t recent = std::min<size_t>(6, holds_.size());
        hold = &holds_[holds_.size() - 1 - static_cast<size_t>(random_.Between(0, recent - 1))];
      } else {
        hold = &random_.Pick(holds_);
      }
      settled_.push_back(static_cast<size_t>(hold - holds_.data()));
    }
    request.hold_target = hold != nullptr
                              ? hold->target
                              : HoldTarget{std::string(kDefaultKeyNamespace), request.scope,
                                           absl::StrCat("never-sent-", next_key_)};
    if (kind == OperationKind::kVoid) return Operation::Void("");
    return maker_.Capture(hold != nullptr ? hold->amount : 0);
  }

  Operation Reverse(Request& request) {
    ReverseTarget target;
    int roll = static_cast<int>(random_.Between(0, 99));
    if (roll < 6) {
      target = {std::string(kDefaultKeyNamespace), request.scope,
                absl::StrCat("never-sent-", next_key_)};
    } else if (roll < 14 && !reversals_.empty()) {
      target = random_.Pick(reversals_);  // a reversal of a reversal: not reversible
    } else {
      target = random_.Pick(reversible_);
    }
    request.reverse_target = target;
    request.scope = target.scope;
    return Operation::Reverse("");  // resolved when the step runs
  }

  void Remember(const Request& request) {
    sent_.push_back({static_cast<int>(steps_.size()), request});
  }

  absl::Duration NextAdvance() {
    int roll = static_cast<int>(random_.Between(0, 99));
    if (roll < 3) return absl::Minutes(random_.Between(5, 40));
    if (roll < 6) return absl::Seconds(random_.Between(30, 120));  // past short hold timeouts
    return absl::Seconds(random_.Between(0, 2));
  }

  // A sweep's faults: only the points its transaction passes (no key is claimed or
  // recorded), more often than a submit's since sweeps are few.
  InjectedFault NextSweepFault() {
    if (!options_.boundary_faults || !random_.Percent(20)) return {};
    static const std::vector<FaultPoint> kPoints = {FaultPoint::kBegin, FaultPoint::kLockAccounts,
                                                    FaultPoint::kWrite, FaultPoint::kCommit};
    int roll = static_cast<int>(random_.Between(0, 99));
    if (roll < 45) return {FaultMode::kUnavailable, random_.Pick(kPoints)};
    if (roll < 75) return {FaultMode::kRetryable, random_.Pick(kPoints)};
    return {FaultMode::kCommitReplyLost, FaultPoint::kCommitReplyLost};
  }

  InjectedFault NextFault() {
    if (options_.kill_sessions) {
      int roll = static_cast<int>(random_.Between(0, 99));
      if (roll < 4) {
        static const std::vector<FaultPoint> kKillPoints = {
            FaultPoint::kAfterClaim, FaultPoint::kLockAccounts, FaultPoint::kWrite,
            FaultPoint::kAfterWrite, FaultPoint::kCommit};
        return {FaultMode::kKillSession, random_.Pick(kKillPoints)};
      }
      if (roll < 5) return {FaultMode::kKillIdleSessions, FaultPoint::kBegin};
    }
    if (!options_.boundary_faults || !random_.Percent(10)) return {};
    static const std::vector<FaultPoint> kPoints = {
        FaultPoint::kBegin,        FaultPoint::kClaim, FaultPoint::kAfterClaim,
        FaultPoint::kLockAccounts, FaultPoint::kWrite, FaultPoint::kAfterWrite,
        FaultPoint::kCommit};
    int roll = static_cast<int>(random_.Between(0, 99));
    if (roll < 45) return {FaultMode::kUnavailable, random_.Pick(kPoints)};
    if (roll < 75) return {FaultMode::kRetryable, random_.Pick(kPoints)};
    return {FaultMode::kCommitReplyLost, FaultPoint::kCommitReplyLost};
  }

  Random random_;
  OperationMaker maker_;
  const Universe& universe_;
  WorkloadOptions options_;
  std::vector<Step> steps_;
  std::vector<std::pair<int, Request>> sent_;  // (step index, request), invalid ones too
  std::vector<ReverseTarget> reversible_;      // identities of non-reverse requests
  std::vector<ReverseTarget> reversals_;
  struct PlannedHold {
    HoldTarget target;
    Amount amount = 0;
    std::optional<absl::Duration> timeout;
    int step_index = 0;
  };
  std::vector<PlannedHold> holds_;  // every hold request sent fresh
  std::vector<size_t> settled_;     // indexes into holds_ some settlement named
  absl::Time planned_now_ = ClockStart();  // the clock if no step is dropped
  int next_key_ = 1;
};

}  // namespace

Universe MakeUniverse(uint64_t seed) {
  Random random(seed ^ 0x5eed'0f'a11'ac'c0u);
  Universe universe;
  universe.assets = {{kCredits, 0}, {kUsd, 2}};
  universe.issuance = "issuance";
  universe.usd_issuance = "usd-issuance";
  universe.payouts = "payouts";
  universe.platform = "platform";
  universe.accounts = {{.id = universe.issuance, .asset = kCredits, .allow_negative = true},
                       {.id = universe.usd_issuance, .asset = kUsd, .allow_negative = true},
                       {.id = universe.payouts, .asset = kCredits},
                       {.id = universe.platform, .asset = kCredits}};
  for (int i = 0; i < kCreditWallets; ++i) {
    universe.credit_wallets.push_back(Numbered("w", i));
    Amount overdraft = random.Percent(10) ? random.Between(1, kOverdraftLimitMax) : 0;
    universe.accounts.push_back(
        {.id = universe.credit_wallets.back(), .asset = kCredits, .overdraft_limit = overdraft});
  }
  for (int i = 0; i < kUsdWallets; ++i) {
    universe.usd_wallets.push_back(Numbered("u", i));
    universe.accounts.push_back({.id = universe.usd_wallets.back(), .asset = kUsd});
  }
  for (int i = 0; i < kMerchants; ++i) {
    universe.merchants.push_back(Numbered("m", i));
    universe.accounts.push_back({.id = universe.merchants.back(), .asset = kCredits});
  }
  for (int i = 0; i < kClosedAccounts; ++i) {
    universe.closed_at_setup.push_back(Numbered("closed", i));
    universe.accounts.push_back({.id = universe.closed_at_setup.back(), .asset = kCredits});
  }
  for (int i = 0; i < kGhosts; ++i) universe.ghosts.push_back(Numbered("ghost", i));
  return universe;
}

std::vector<Step> GenerateWorkload(uint64_t seed, const Universe& universe,
                                   const WorkloadOptions& options) {
  return WorkloadGenerator(seed, universe, options).Generate();
}

std::vector<std::vector<Request>> GenerateConcurrentPhase(uint64_t seed, const Universe& universe,
                                                          const ConcurrentPhaseOptions& options) {
  Random random(seed * 1'000'003u + static_cast<uint64_t>(options.phase));
  OperationMaker maker(random, universe);
  auto fresh_operation = [&]() {
    int roll = static_cast<int>(random.Between(0, 99));
    if (roll < 27) return maker.TopUp();
    if (roll < 52) return maker.Transfer();
    if (roll < 70) return maker.Spend();
    if (roll < 79) return maker.Payout();
    if (roll < 88) return maker.Post();
    // A hold without expiry or one the runner's clock move (kConcurrentClockMove) passes.
    Operation hold = maker.Hold(ClockStart());
    hold.expires_at.reset();
    hold.timeout.reset();
    if (random.Percent(60)) hold.timeout = absl::Seconds(random.Between(20, 90));
    return hold;
  };
  // Settlements of earlier phases' holds: full or partial captures (some above the
  // hold: the generator does not know its amount) and voids.
  auto settlement = [&]() {
    const std::string& hold_id = random.Pick(options.hold_ids);
    if (random.Percent(30)) return Operation::Void(hold_id);
    if (random.Percent(50)) return Operation::Capture(hold_id);
    return Operation::Capture(hold_id, random.Between(1, 1500));
  };
  // Requests several clients send: the same key and payload, delivered concurrently.
  std::vector<Request> shared;
  int shared_count = std::max(4, options.requests_per_thread / 5);
  for (int i = 0; i < shared_count; ++i) {
    bool settles = !options.hold_ids.empty() && i % 5 == 4;
    Request request{absl::StrCat("p", options.phase, "-shared-", i), PickScope(random),
                    settles ? settlement() : fresh_operation()};
    request.operation.metadata = {{"shared", i}};
    shared.push_back(std::move(request));
  }
  std::vector<std::vector<Request>> lists(static_cast<size_t>(options.threads));
  for (int thread = 0; thread < options.threads; ++thread) {
    std::vector<Request>& list = lists[static_cast<size_t>(thread)];
    for (int n = 0; n < options.requests_per_thread; ++n) {
      int roll = static_cast<int>(random.Between(0, 99));
      if (roll < 20) {
        list.push_back(random.Pick(shared));
      } else if (roll < 24) {
        Request variant = random.Pick(shared);  // same key, another payload
        variant.operation.metadata["variant"] = thread;
        list.push_back(std::move(variant));
      } else if (roll < 30 && !options.reversible_transaction_ids.empty()) {
        // Different keys racing to reverse the same transaction: one may win.
        const std::string& target = random.Pick(options.reversible_transaction_ids);
        list.push_back({absl::StrCat("p", options.phase, "-t", thread, "-rev-", n),
                        Scope{"acme", "api"}, Operation::Reverse(target)});
      } else if (roll < 37 && !options.hold_ids.empty()) {
        // Different keys racing to settle the same hold: one capture or void wins (or
        // the expiry, when the hold lapses under the race).
        list.push_back({absl::StrCat("p", options.phase, "-t", thread, "-settle-", n),
                        Scope{"acme", "api"}, settlement()});
      } else if (roll < 42 && !list.empty()) {
        list.push_back(random.Pick(list));  // this client's own retry
      } else {
        Request request{absl::StrCat("p", options.phase, "-t", thread, "-", n), PickScope(random),
                        fresh_operation()};
        list.push_back(std::move(request));
      }
    }
  }
  return lists;
}

std::string FaultModeName(FaultMode mode) {
  switch (mode) {  // no default: -Wswitch reports a mode without a name
    case FaultMode::kNone: return "none";
    case FaultMode::kUnavailable: return "unavailable";
    case FaultMode::kRetryable: return "retryable";
    case FaultMode::kCommitReplyLost: return "commit reply lost";
    case FaultMode::kKillSession: return "kill session";
    case FaultMode::kKillIdleSessions: return "kill idle sessions";
    case FaultMode::kRestartServer: return "restart server";
  }
  return "?";
}

std::string FaultPointName(FaultPoint point) {
  switch (point) {
    case FaultPoint::kBegin:
      return "begin";
    case FaultPoint::kClaim:
      return "claim";
    case FaultPoint::kAfterClaim:
      return "after_claim";
    case FaultPoint::kLockAccounts:
      return "lock_accounts";
    case FaultPoint::kWrite:
      return "write";
    case FaultPoint::kAfterWrite:
      return "after_write";
    case FaultPoint::kCommit:
      return "commit";
    case FaultPoint::kCommitReplyLost:
      return "commit_reply_lost";
  }
  return "?";
}

std::string DescribeRequest(const Request& request) {
  const Operation& op = request.operation;
  std::string text = absl::StrCat("key=", request.key, " scope=", request.scope.Encoded(), " ",
                                  View(OperationKindName(op.kind)));
  switch (op.kind) {
    case OperationKind::kReverse:
      if (request.reverse_target.has_value()) {
        const ReverseTarget& target = *request.reverse_target;
        absl::StrAppend(&text, " of the transaction committed by ", target.key_namespace, "|",
                        target.scope.Encoded(), "|", target.key);
      } else {
        absl::StrAppend(&text, " of ", op.transaction_id);
      }
      break;
    case OperationKind::kCapture:
    case OperationKind::kVoid:
      if (request.hold_target.has_value()) {
        const HoldTarget& target = *request.hold_target;
        absl::StrAppend(&text, " of the hold placed by ", target.key_namespace, "|",
                        target.scope.Encoded(), "|", target.key);
      } else {
        absl::StrAppend(&text, " of ", op.hold_id);
      }
      if (op.capture_amount.has_value()) absl::StrAppend(&text, " amount ", *op.capture_amount);
      break;
    case OperationKind::kPost:
      for (const Posting& posting : op.postings) {
        absl::StrAppend(&text, " ", posting.account_id, ":", posting.amount, " ", posting.asset);
      }
      break;
    default:
      absl::StrAppend(&text, " ", op.from, " -> ", op.to, " ", op.amount, " ", op.asset);
      if (op.fee.has_value()) absl::StrAppend(&text, " fee ", op.fee->amount, " -> ", op.fee->to);
      if (op.timeout.has_value()) {
        absl::StrAppend(&text, " timeout ", absl::FormatDuration(*op.timeout));
      }
      if (op.expires_at.has_value()) {
        absl::StrAppend(&text, " expires_at ", FormatTimestamp(*op.expires_at));
      }
      break;
  }
  if (!op.metadata.empty()) absl::StrAppend(&text, " metadata=", op.metadata.dump());
  if (request.ttl != kKeyTtlDefault)
    absl::StrAppend(&text, " ttl=", absl::FormatDuration(request.ttl));
  return text;
}

std::string DescribeStep(int index, const Step& step) {
  std::string text = absl::StrCat("#", index, " +", absl::FormatDuration(step.advance), " ");
  if (step.kind == StepKind::kCloseAccount) {
    absl::StrAppend(&text, "close account ", step.account_id);
  } else if (step.kind == StepKind::kExpireHolds) {
    absl::StrAppend(&text, "expire holds");
  } else {
    absl::StrAppend(&text, "submit ", DescribeRequest(step.request));
  }
  if (step.fault.mode != FaultMode::kNone) {
    absl::StrAppend(&text, " [fault: ", FaultModeName(step.fault.mode), " at ",
                    FaultPointName(step.fault.point), "]");
  }
  absl::StrAppend(&text, " (", step.origin, ")");
  return text;
}

}  // namespace ledger::property
