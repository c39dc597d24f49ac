#include "bench/load/workload.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ledger::load {
namespace {

// Two distinct user indexes, uniformly.
std::pair<int, int> TwoUsers(std::mt19937_64& random, int accounts) {
  std::uniform_int_distribution<int> first(0, accounts - 1);
  std::uniform_int_distribution<int> offset(1, accounts - 1);
  int from = first(random);
  int to = (from + offset(random)) % accounts;
  return {from, to};
}

Amount RandomAmount(std::mt19937_64& random, Amount minimum) {
  return std::uniform_int_distribution<Amount>(minimum, kMovedAmountMax)(random);
}

Operation RandomTransfer(std::mt19937_64& random, int accounts) {
  auto [from, to] = TwoUsers(random, accounts);
  return Operation::Transfer(UserAccountId(from), UserAccountId(to), kLoadAsset,
                             RandomAmount(random, 1));
}

// Top-ups and fees: the two ways real traffic funnels into one platform account.
Operation RandomHotOperation(std::mt19937_64& random, int accounts, int64_t sequence) {
  auto [from, to] = TwoUsers(random, accounts);
  if (sequence % 2 == 0) {
    return Operation::TopUp(kPlatformAccountId, UserAccountId(to), kLoadAsset,
                            RandomAmount(random, 1));
  }
  Amount amount = RandomAmount(random, 2);
  Amount fee = std::max<Amount>(1, amount / 20);
  return Operation::Spend(UserAccountId(from), UserAccountId(to), kLoadAsset, amount,
                          Fee{kPlatformAccountId, fee});
}

class GeneratedSource final : public RequestSource {
 public:
  GeneratedSource(WorkloadPlan plan, int client_index)
      : plan_(std::move(plan)),
        client_index_(client_index),
        random_(plan_.seed * 1'000'003 + static_cast<uint64_t>(client_index)) {}

  std::optional<PlannedSubmit> Next() override {
    if (plan_.workload == Workload::kRetry && !sent_.empty() &&
        std::bernoulli_distribution(plan_.retry_fraction)(random_)) {
      size_t pick = std::uniform_int_distribution<size_t>(0, sent_.size() - 1)(random_);
      return PlannedSubmit{sent_[pick], /*resend=*/true};
    }
    SubmitRequest request{.key = absl::StrCat(plan_.key_prefix, "-c", client_index_, "-", sequence_),
                          .scope = LoadScope(),
                          .operation = plan_.workload == Workload::kHot
                                           ? RandomHotOperation(random_, plan_.accounts, sequence_)
                                           : RandomTransfer(random_, plan_.accounts)};
    ++sequence_;
    if (plan_.workload == Workload::kRetry) Remember(request);
    return PlannedSubmit{std::move(request), /*resend=*/false};
  }

 private:
  void Remember(const SubmitRequest& request) {
    if (sent_.size() < kResendMemorySize) {
      sent_.push_back(request);
    } else {
      sent_[static_cast<size_t>(sequence_) % kResendMemorySize] = request;
    }
  }

  const WorkloadPlan plan_;
  const int client_index_;
  std::mt19937_64 random_;
  int64_t sequence_ = 0;
  std::vector<SubmitRequest> sent_;  // retry workload: what may be resent
};

// Each key of the shared sequence is handed out twice in a row, so with several clients
// its two submits run at the same time on different threads.
class ConflictSource final : public RequestSource {
 public:
  ConflictSource(WorkloadPlan plan, SharedSequence& shared)
      : plan_(std::move(plan)), shared_(shared) {}

  std::optional<PlannedSubmit> Next() override {
    int64_t ticket = shared_.next.fetch_add(1, std::memory_order_relaxed);
    int64_t race = ticket / 2;
    bool second = ticket % 2 == 1;
    // The payload derives from the race number alone, so both racers build the same one.
    std::mt19937_64 random(plan_.seed * 7'919 + static_cast<uint64_t>(race));
    Operation op = RandomTransfer(random, plan_.accounts);
    if (second && race % kConflictPayloadEvery == 0) op.amount += 1;
    return PlannedSubmit{
        SubmitRequest{.key = absl::StrCat(plan_.key_prefix, "-race-", race),
                      .scope = LoadScope(),
                      .operation = std::move(op)},
        /*resend=*/second};
  }

 private:
  const WorkloadPlan plan_;
  SharedSequence& shared_;
};

class ReplaySource final : public RequestSource {
 public:
  explicit ReplaySource(ReplayQueue& queue) : queue_(queue) {}

  std::optional<PlannedSubmit> Next() override {
    size_t index = queue_.next.fetch_add(1, std::memory_order_relaxed);
    if (index >= queue_.requests.size()) return std::nullopt;
    return PlannedSubmit{queue_.requests[index], /*resend=*/true};
  }

 private:
  ReplayQueue& queue_;
};

}  // namespace

std::string UserAccountId(int index) {
  return absl::StrCat("bench-user-", absl::Dec(index, absl::kZeroPad6));
}

Scope LoadScope() { return Scope{"bench", "load"}; }

std::unique_ptr<RequestSource> MakeWorkloadSource(const WorkloadPlan& plan, int client_index,
                                                  SharedSequence& shared) {
  if (plan.workload == Workload::kConflict) return std::make_unique<ConflictSource>(plan, shared);
  return std::make_unique<GeneratedSource>(plan, client_index);
}

std::unique_ptr<RequestSource> MakeReplaySource(ReplayQueue& queue) {
  return std::make_unique<ReplaySource>(queue);
}

}  // namespace ledger::load
