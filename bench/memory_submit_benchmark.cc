// Ledger::Submit on the memory engine: the pipeline's own cost with no database under
// it (validation, fingerprint, claim, lock, post, record, event). Fresh commits,
// duplicate replays and the raw floor (no claim, no record), single- and multi-threaded,
// without group commit; and fresh commits through group commit (the library's default),
// whose one-thread figure is what a lone submit pays for it (issue 29).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/typical_operations.h"
#include "benchmark/benchmark.h"
#include "engines/memory/memory_engine.h"
#include "ledger/internal/testing_hooks.h"
#include "ledger/ledger.h"

namespace ledger::bench {
namespace {

constexpr int kWalletCount = 10'000;
constexpr Amount kWalletFunding = 1'000'000'000;
constexpr int kFundingLegsPerPost = 63;  // plus the issuance leg: 64, the postings limit

std::string WalletId(int index) { return absl::StrFormat("wallet-%06d", index); }

// Every submit in this process needs a key never used before, across benchmark runs.
std::string NextKey() {
  static std::atomic<int64_t> next_key{0};
  return absl::StrCat("bench-key-", next_key.fetch_add(1, std::memory_order_relaxed));
}

class MemoryLedgers {
 public:
  MemoryLedgers()
      : engine_(OpenMemoryEngine()),
        exactly_once_(OpenedOrAbort(Ledger::Open(engine_, kPlain))),
        raw_(OpenedOrAbort(internal::LedgerTestingHooks::OpenWithoutIdempotency(engine_, kPlain))),
        group_committed_(OpenedOrAbort(Ledger::Open(engine_, {.group_commit = {.enabled = true}}))) {
    Check(exactly_once_.DefineAsset({kBenchAsset, 0}));
    Check(exactly_once_.OpenAccount({.id = "issuance", .asset = kBenchAsset, .allow_negative = true})
              .status());
    for (int index = 0; index < kWalletCount; ++index) {
      Check(exactly_once_.OpenAccount({.id = WalletId(index), .asset = kBenchAsset}).status());
    }
    for (int first = 0; first < kWalletCount; first += kFundingLegsPerPost) Fund(first);
  }

  Ledger& exactly_once() { return exactly_once_; }
  Ledger& raw() { return raw_; }
  Ledger& group_committed() { return group_committed_; }

 private:
  inline static const LedgerOptions kPlain{.group_commit = {.enabled = false}};

  static Ledger OpenedOrAbort(absl::StatusOr<Ledger> ledger) {
    Check(ledger.status());
    return *std::move(ledger);
  }

  static void Check(const absl::Status& status) {
    if (!status.ok()) {
      absl::FPrintF(stderr, "memory ledger setup failed: %s\n", status.ToString());
      std::abort();
    }
  }

  void Fund(int first) {
    std::vector<Posting> postings;
    for (int index = first; index < kWalletCount && index < first + kFundingLegsPerPost; ++index) {
      postings.push_back({WalletId(index), kBenchAsset, kWalletFunding});
    }
    postings.push_back(
        {"issuance", kBenchAsset, -kWalletFunding * static_cast<Amount>(postings.size())});
    absl::StatusOr<Outcome> outcome =
        exactly_once_.Submit({.key = NextKey(), .operation = Operation::Post(std::move(postings))});
    Check(outcome.status());
    if (outcome->kind != OutcomeKind::kCommitted) Check(absl::InternalError("funding not committed"));
  }

  std::shared_ptr<Engine> engine_;
  Ledger exactly_once_;
  Ledger raw_;
  Ledger group_committed_;
};

MemoryLedgers& SharedLedgers() {
  static MemoryLedgers ledgers;  // shared by every benchmark and thread
  return ledgers;
}

// Transfers between wallets picked by a per-thread linear congruential walk: cheap,
// deterministic, and spread over all wallets.
SubmitRequest NextTransfer(uint64_t& walk) {
  walk = walk * 6364136223846793005ULL + 1442695040888963407ULL;
  int from = static_cast<int>((walk >> 33) % kWalletCount);
  int to = (from + 1 + static_cast<int>((walk >> 13) % (kWalletCount - 1))) % kWalletCount;
  return {.key = NextKey(),
          .operation = Operation::Transfer(WalletId(from), WalletId(to), kBenchAsset, 1)};
}

void SubmitFreshTransfers(benchmark::State& state, Ledger& ledger, OutcomeKind expected) {
  uint64_t walk = static_cast<uint64_t>(state.thread_index()) + 1;
  for (auto _ : state) {
    // Building the request (~0.1 us) stays inside the timing: PauseTiming per iteration
    // would cost more than it removes.
    SubmitRequest request = NextTransfer(walk);
    absl::StatusOr<Outcome> outcome = ledger.Submit(request);
    if (!outcome.ok() || outcome->kind != expected) {
      state.SkipWithError("submit did not commit");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_MemorySubmitFreshCommit(benchmark::State& state) {
  SubmitFreshTransfers(state, SharedLedgers().exactly_once(), OutcomeKind::kCommitted);
}
BENCHMARK(BM_MemorySubmitFreshCommit)->ThreadRange(1, 8)->UseRealTime();

void BM_MemorySubmitRawNoClaim(benchmark::State& state) {
  SubmitFreshTransfers(state, SharedLedgers().raw(), OutcomeKind::kCommitted);
}
BENCHMARK(BM_MemorySubmitRawNoClaim)->ThreadRange(1, 8)->UseRealTime();

// The same fresh commits through group commit: at one thread every submit runs alone
// (nothing queued), so the difference from BM_MemorySubmitFreshCommit/threads:1 is all a
// lone submit pays for group commit.
void BM_MemorySubmitFreshCommitGroupCommitted(benchmark::State& state) {
  SubmitFreshTransfers(state, SharedLedgers().group_committed(), OutcomeKind::kCommitted);
}
BENCHMARK(BM_MemorySubmitFreshCommitGroupCommitted)->ThreadRange(1, 8)->UseRealTime();

// A retry of a committed key: claim, find the record, read the transaction back.
void BM_MemorySubmitDuplicateReplay(benchmark::State& state) {
  Ledger& ledger = SharedLedgers().exactly_once();
  uint64_t walk = static_cast<uint64_t>(state.thread_index()) + 101;
  const SubmitRequest request = NextTransfer(walk);
  absl::StatusOr<Outcome> first = ledger.Submit(request);
  if (!first.ok() || first->kind != OutcomeKind::kCommitted) {
    state.SkipWithError("the first submit did not commit");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<Outcome> outcome = ledger.Submit(request);
    if (!outcome.ok() || outcome->kind != OutcomeKind::kDuplicate) {
      state.SkipWithError("the resend was not a duplicate");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemorySubmitDuplicateReplay)->ThreadRange(1, 8)->UseRealTime();

}  // namespace
}  // namespace ledger::bench
